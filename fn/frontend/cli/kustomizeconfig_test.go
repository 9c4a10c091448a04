package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// `nrl-k8s kustomize-config` prints the repository's kustomize/ files, byte
// for byte, so an overlay can take them from the binary it renders with.
func TestKustomizeConfigCommand(t *testing.T) {
	root := testenv.RepoRoot(t)
	runCases(t, []cliCase{
		{name: "configuration", args: []string{"kustomize-config", "configuration"}, exact: true,
			out: testenv.ReadFile(t, filepath.Join(root, "kustomize/nrl-k8s.configuration.yaml"))},
		{name: "openapi", args: []string{"kustomize-config", "openapi"}, exact: true,
			out: testenv.ReadFile(t, filepath.Join(root, "kustomize/openapi/kuberay.json"))},
		{name: "unknown file", args: []string{"kustomize-config", "nope"}, code: cli.ExitUsage, err: `unknown file "nope"; expected configuration or openapi`},
		{name: "no file", args: []string{"kustomize-config"}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 0"},
	})
}
