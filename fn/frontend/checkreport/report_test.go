package checkreport_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// render is the README's example: the GB300 qwen3-30B recipe and profile.
func render(t *testing.T, overrides ...string) *pipeline.Result {
	t.Helper()
	return renderPair(t, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
		"profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml", overrides...)
}

func renderPair(t *testing.T, recipeFile, profileFile string, overrides ...string) *pipeline.Result {
	t.Helper()
	root := testenv.RepoRoot(t)
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe:    filepath.Join(root, recipeFile),
		Profile:   filepath.Join(root, profileFile),
		Run:       runparams.Run{Mode: runparams.RayJob, User: "alice"},
		Overrides: overrides,
	})
	return res
}

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   diag.List
		want string
	}{
		{"none", nil, "CHECKS\n------\n  0 error(s), 0 warning(s)\n"},
		{
			"sorted, notes not counted",
			diag.List{
				{Severity: diag.Info, File: "a.yaml", Message: "note"},
				{Severity: diag.Warning, File: "b.yaml", Field: "x", Message: "warn"},
				{Severity: diag.Error, File: "c.yaml", Field: "y", Message: "bad\nline"},
			},
			"CHECKS\n------\n  error: c.yaml: y: bad\\nline\n  warning: b.yaml: x: warn\n  info: a.yaml: note\n  1 error(s), 1 warning(s)\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			checkreport.Findings(&b, tc.ds)
			require.Equal(t, tc.want, b.String())
		})
	}
}

// The summary reads the rendered objects: the scheduler and queue the pods
// name, the --config the pod reads, the DRA objects, the defaults used.
func TestSummaryOfARender(t *testing.T) {
	res := render(t, "cluster.num_nodes=4")
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	var b bytes.Buffer
	checkreport.Summary(&b, res)
	out := b.String()
	for _, want := range []string{
		"namespace:   default\n",
		"scheduler:   kai-scheduler (queue=rl)\n",
		"recipe:      " + res.Recipe.Files[0] + " <- ",
		`  cluster.num_nodes = 4 (run override "cluster.num_nodes=4")` + "\n",
		"pod reads:   --config examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml (line ",
		"    cluster.num_nodes=4 2>&1 | tee", // the run's override, in the rendered entrypoint
		"\nKUBERAY\n-------\n  training: alice-raycluster-qwen3-30b-math-gb300\n",
		"    workers 4x (4 segments x 1) cpu=132 mem=900Gi gpu=16\n",
		"\nDRA RESOURCES\n-------------\n  ComputeDomain: ",
		"\nDEFAULTS APPLIED (no profile key sets them)\n",
		"  namespace = default (no namespace in the profile or the run)\n",
	} {
		require.Contains(t, out, want)
	}
}

// Pods that name no scheduler are the default scheduler's; no queue is named.
func TestSummaryDefaultScheduler(t *testing.T) {
	res := renderPair(t, "recipes/examples/configs/recipes/llm/grpo-llama3.2-1b-instruct-1n8g-fsdp2tp1.v3.yaml",
		"profiles/generic/grpo-llama3.2-1b-instruct-1n8g.single-node-8gpu.infra.yaml")
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	var b bytes.Buffer
	checkreport.Summary(&b, res)
	require.Contains(t, b.String(), "scheduler:   default-scheduler\n")
}

// A render that made nothing says so instead of guessing from the profile.
func TestSummaryWithNothingRendered(t *testing.T) {
	res := render(t)
	res.Docs = nil
	var b bytes.Buffer
	checkreport.Summary(&b, res)
	out := b.String()
	require.Contains(t, out, "scheduler:   (nothing rendered)\n")
	require.NotContains(t, out, "pod reads:")
	require.Contains(t, out, "entrypoint:\n", "the profile's own entrypoint")
	require.NotContains(t, out, "DEFAULTS APPLIED")
	require.NotContains(t, out, "DRA RESOURCES")

}

// DEFAULTS APPLIED lists only values no layer of the profile (its file, a
// `defaults:` base, an `infra.` override) or the run set: a key set to
// defaults.yaml's value is the profile's, not a default.
func TestDefaultsAppliedOmitsKeysTheProfileSets(t *testing.T) {
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(root, "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"))
	require.NoError(t, err)
	child := filepath.Join(dir, "child.infra.yaml")
	require.NoError(t, os.WriteFile(child, []byte("defaults: "+base+"\nnamespace: default\ndra:\n  roce:\n    deviceClassName: roce.networking.k8s.aws\nlaunch:\n  rayjob:\n    submissionMode: HTTPMode\n"), 0o600))
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe:    filepath.Join(root, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"),
		Profile:   child,
		Run:       runparams.Run{Mode: runparams.RayJob, User: "alice"},
		Overrides: []string{"infra.dra.roce.count=8"},
	})
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	var b bytes.Buffer
	checkreport.Summary(&b, res)
	out := b.String()
	for _, set := range []string{"namespace =", "dra.roce.deviceClassName =", "dra.roce.count =", "launch.rayjob.submissionMode ="} {
		require.NotContains(t, out, "  "+set, "the profile sets it")
	}
	for _, left := range []string{"dra.computeDomain.numNodes = 0", "launch.rayjob.ttlSecondsAfterFinished = 3600"} {
		require.Contains(t, out, "  "+left+" (", "no layer sets it")
	}
}

// A cluster's own dra.roce key sets the NICs its workers get.
func TestDefaultsAppliedOmitsAClustersOwnKey(t *testing.T) {
	res := render(t, "infra.kuberay.training.dra.roce.count=8")
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	var b bytes.Buffer
	checkreport.Summary(&b, res)
	require.NotContains(t, b.String(), "  dra.roce.count =")
	require.Contains(t, b.String(), "  dra.roce.deviceClassName =")
}
