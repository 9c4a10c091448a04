package check

import (
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// recipeInts reads the recipe's counts (nodes, GPUs, batch and parallel
// sizes) as NeMo-RL uses them: Python integers it multiplies, divides and
// builds lists of. A value of another type or below 1 is an error naming
// the key and what set it, reported once per key; the checks that read it
// then skip it, so one bad value gives one error, not a cascade.
type recipeInts struct {
	ds   *diag.List
	r    *effective.Recipe
	seen map[string]bool
	bad  bool
}

func newRecipeInts(ds *diag.List, r *effective.Recipe) *recipeInts {
	return &recipeInts{ds: ds, r: r, seen: map[string]bool{}}
}

// get returns the value at key when it is a positive integer. Absent and
// null values, values the pod's shell sets (`key=$VAR`) and interpolations
// left for the pod are unknown here: false, and no error.
func (v *recipeInts) get(key string) (int64, bool) {
	val, ok, dyn := v.r.Value(key)
	if !ok || dyn || val == nil {
		return 0, false
	}
	if s, isStr := val.(string); isStr && strings.Contains(s, "${") {
		return 0, false
	}
	if n, isInt := val.(int64); isInt && n > 0 {
		return n, true
	}
	if !v.seen[key] {
		v.seen[key] = true
		v.bad = true
		v.ds.Errorf(fileOf(v.r, key), key, "found %s (%s, set by %s); expected a positive integer: NeMo-RL computes node, GPU and batch counts with it",
			show(val), tree.AKind(val), v.r.Origin(key))
	}
	return 0, false
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// clusterKeys are read by every run: NeMo-RL's RayVirtualCluster is
// `[gpus_per_node] * num_nodes` bundles (nemo_rl/algorithms/sft.py,
// grpo.py), and recipeVsCluster compares them with the training workers.
var clusterKeys = []string{"cluster.num_nodes", "cluster.gpus_per_node"}

// recipeCounts checks the recipe's counts (types and ranges, then
// parallelism and batch sizes against the GPUs) and reports whether the
// cluster keys are sound enough for recipeVsCluster to compare.
func recipeCounts(ds *diag.List, infra *profile.Infra, r *effective.Recipe) bool {
	v := newRecipeInts(ds, r)
	for _, k := range clusterKeys {
		v.get(k)
	}
	clusterOK := !v.bad
	parallelism(ds, v, r, nvlinkAcrossNodes(infra))
	return clusterOK
}

// nvlinkAcrossNodes: the training workers claim a ComputeDomain, so their
// GPUs share one NVLink domain across nodes (GB200/GB300 NVL72 racks) and a
// tensor parallel group spanning nodes stays on NVLink, as NeMo-RL's own
// GB300 example runs TP 8 on 4-GPU nodes (grpo_ultra_64n4g_pipeclean.yaml).
func nvlinkAcrossNodes(infra *profile.Infra) bool {
	c := infra.Kuberay.Training
	if c == nil || c.Spec == nil {
		return false
	}
	for _, g := range c.Spec.WorkerGroupSpecs {
		for _, rc := range g.Template.Spec.ResourceClaims {
			if rc.Name == vocab.ComputeDomainClaim {
				return true
			}
		}
	}
	return false
}
