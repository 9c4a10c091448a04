package e2e

import (
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
