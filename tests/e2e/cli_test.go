package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// check --strict passes on the shipped examples in every mode.
func TestCheckStrictOnShippedExamples(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, s := range shipped {
		for _, mode := range []string{"rayjob", "raycluster", "dev"} {
			code, out, stderr := nrl(t, root, "check", "--strict", s.recipe, "--infra", s.profile, "--mode", mode, "--user", "alice")
			require.Zero(t, code, "%s %s:\n%s%s", s.name, mode, out, stderr)
			require.Contains(t, string(out), " 0 error(s)")
		}
	}
}

// A value the Go types accept but the CRD's schema does not (an enum)
// passes a plain check and fails check --strict, naming the field.
func TestCheckStrictCatchesSchemaViolations(t *testing.T) {
	dir := t.TempDir()
	p := strings.Replace(smallProfile, "    spec:\n      headGroupSpec:", "    spec:\n      enableInTreeAutoscaling: true\n      autoscalerOptions: {upscalingMode: Fast}\n      headGroupSpec:", 1)
	require.NotEqual(t, smallProfile, p)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.infra.yaml"), []byte(p), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.yaml"), []byte("cluster: {gpus_per_node: 4, num_nodes: 2}\n"), 0o644))

	code, out, stderr := nrl(t, dir, "check", "r.yaml", "--infra", "p.infra.yaml", "--user", "alice")
	require.Zero(t, code, "%s%s", out, stderr)

	code, out, _ = nrl(t, dir, "check", "--strict", "r.yaml", "--infra", "p.infra.yaml", "--user", "alice")
	require.Equal(t, 1, code, "%s", out)
	require.Contains(t, string(out), "error: p.infra.yaml: output RayJob/c.spec.rayClusterSpec.autoscalerOptions.upscalingMode: Unsupported value: \"Fast\": supported values: \"Default\", \"Aggressive\", \"Conservative\"")
}

// secretKeyRef and secretRef pass through unchanged to every container.
func TestSecretReferencesPassThrough(t *testing.T) {
	p := strings.Replace(smallProfile, "containers: [{name: ray-worker, resources:",
		"containers: [{name: ray-worker, envFrom: [{secretRef: {name: alice-secrets, optional: true}}], env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}], resources:", 1)
	require.NotEqual(t, smallProfile, p)
	src := source.Memory{"p.infra.yaml": []byte(p), "r.yaml": []byte("cluster: {gpus_per_node: 4, num_nodes: 2}\n")}
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		out := string(renderIn(t, src, pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: runparams.Run{Mode: mode, User: "alice"}}))
		flat := dedent(out)
		require.Contains(t, flat, "- name: HF_TOKEN\nvalueFrom:\nsecretKeyRef:\nkey: token\nname: hf\n", mode)
		require.Contains(t, flat, "envFrom:\n- secretRef:\nname: alice-secrets\noptional: true\n", mode)
	}
}

// dedent drops indentation so that checks do not depend on nesting depth.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}
