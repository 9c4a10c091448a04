package cli_test

import (
	"slices"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// kustomize-inputs prints the inputs block of examples/kustomize, or kpt's
// ConfigMaps; --check passes on the committed block and fails, with a
// diff, when a run is left out; its flag conflicts are usage errors.
func TestKustomizeInputsCommand(t *testing.T) {
	t.Chdir(testenv.RepoRoot(t))
	k := []string{"kustomize-inputs", "-k", "examples/kustomize", "--root", "."}
	both := slices.Concat(k, []string{"examples/kustomize/run.yaml", "examples/kustomize/runs.yaml"})
	runCases(t, []cliCase{
		{name: "print", args: slices.Concat(k, []string{"examples/kustomize/run.yaml"}),
			out: "# BEGIN nrl-k8s kustomize-inputs: generated, do not edit (nrl-k8s kustomize-inputs --write)\nconfigMapGenerator:\n- name: nrl-profiles-gb300\n"},
		{name: "kpt", args: []string{"kustomize-inputs", "--kpt", "examples/kpt", "--root", ".", "examples/kpt/run.yaml"}, out: "---\napiVersion: v1\nkind: ConfigMap\n"},
		{name: "check", args: slices.Concat(both, []string{"--check"}), exact: true},
		{name: "check, stale", args: slices.Concat(k, []string{"examples/kustomize/run.yaml", "--check"}), code: cli.ExitError,
			err: "examples/kustomize/kustomization.yaml: the inputs block is stale; run nrl-k8s kustomize-inputs --write\n--- examples/kustomize/kustomization.yaml\n"},
		{name: "no run", args: k, code: cli.ExitUsage, err: "requires at least 1 arg(s), only received 0"},
		{name: "write and check", args: slices.Concat(both, []string{"--write", "--check"}), code: cli.ExitUsage, err: "--write and --check are exclusive"},
		{name: "-k and --kpt", args: slices.Concat(both, []string{"--kpt", "examples/kpt"}), code: cli.ExitUsage, err: "-k and --kpt are exclusive"},
		{name: "no root", args: []string{"kustomize-inputs", "--root", "nope", "examples/kustomize/run.yaml"}, code: cli.ExitUsage, err: "--root: root nope: "},
	})
}
