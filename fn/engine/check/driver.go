package check

import (
	"fmt"
	"path"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// drivers are NeMo-RL's drivers (examples/run_*.py and
// examples/nemo_gym/run_*.py at 7ea279abf) and the algorithm whose
// MasterConfig each loads: the top-level section that config must have
// (`grpo:`, `sft:`, ...; docs/nrl-k8s.md §5.1 cites each).
var drivers = []struct{ path, algorithm string }{
	{"examples/run_grpo.py", "grpo"},
	{"examples/run_grpo_sliding_puzzle.py", "grpo"},
	{"examples/run_grpo_single_controller.py", "grpo"},
	{"examples/run_vlm_grpo.py", "grpo"},
	{"examples/nemo_gym/run_grpo_nemo_gym.py", "grpo"},
	{"examples/run_sft.py", "sft"},
	{"examples/run_vlm_sft.py", "sft"},
	{"examples/run_dpo.py", "dpo"},
	{"examples/run_rm.py", "rm"},
	{"examples/run_ppo.py", "ppo"},
	{"examples/run_distillation.py", "distillation"},
	{"examples/nemo_gym/run_distillation_nemo_gym.py", "distillation"},
	{"examples/run_xtoken_off_policy_distillation.py", "distillation"},
	{"examples/run_eval.py", "eval"},
}

// algorithmKeys are the top-level sections that name a recipe's algorithm.
var algorithmKeys = []string{"grpo", "sft", "dpo", "rm", "ppo", "distillation", "eval"}

// RecipeAlgorithms lists the algorithm sections a recipe has (a mapping
// under one of algorithmKeys), in algorithmKeys order.
func RecipeAlgorithms(m *tree.Map) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, k := range algorithmKeys {
		if v, ok := m.Get(k); ok {
			if _, isMap := v.(*tree.Map); isMap {
				out = append(out, k)
			}
		}
	}
	return out
}

// DriverAlgorithm is the algorithm a NeMo-RL driver runs, "" for a script
// that is not one of NeMo-RL's drivers (a user's own train.py).
// Drivers are matched by file name: the pod's checkout may live anywhere.
func DriverAlgorithm(script string) string {
	base := path.Base(script)
	for _, d := range drivers {
		if path.Base(d.path) == base {
			return d.algorithm
		}
	}
	return ""
}

// driverVsRecipe: every training call reads the checked recipe (its
// --config is pointed at it), so the driver must run the recipe's
// algorithm. The GRPO driver on an SFT recipe fails after the cluster is
// up, when NeMo-RL validates the config against its MasterConfig. A
// recipe with no algorithm section, or a driver that is not NeMo-RL's, is
// not judged: nothing says what either expects.
func driverVsRecipe(ds *diag.List, f string, r *effective.Recipe) {
	ep := r.Entrypoint
	if ep == nil || r.Tree == nil {
		return
	}
	algs := RecipeAlgorithms(r.Tree)
	if len(algs) == 0 {
		return
	}
	for _, inv := range ep.Calls {
		want := DriverAlgorithm(inv.Script)
		if want == "" || inv.Config == "" {
			// No --config: the driver reads its own default config, which
			// check.PodConfig already warns is not the checked recipe.
			continue
		}
		has := false
		for _, a := range algs {
			has = has || a == want
		}
		if has {
			continue
		}
		var set []string
		for _, a := range algs {
			set = append(set, fmt.Sprintf("`%s:` set by %s", a, r.Origin(a)))
		}
		ds.Errorf(f, "launch.entrypoint", "line %d: the driver %s runs NeMo-RL's %s algorithm, but the checked recipe %s is %s recipe (%s); expected %s as the driver of this recipe, or a recipe with a `%s:` section for this driver",
			inv.Line, inv.Script, want, r.File, tree.Article(strings.Join(algs, "/")), strings.Join(set, ", "), driversFor(algs), want)
	}
}

// driversFor names NeMo-RL's drivers for the given algorithms.
func driversFor(algs []string) string {
	var out []string
	for _, a := range algs {
		for _, d := range drivers {
			if d.algorithm == a {
				out = append(out, d.path)
			}
		}
	}
	if len(out) == 0 {
		return "matching"
	}
	return strings.Join(out, " or ")
}
