package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

const checkoutProfile = `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: |
    cd /opt/nemo-rl && python examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml
kuberay:
  training:
    name: c
    spec:
      headGroupSpec:
        template:
          spec:
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 1
          template:
            spec:
              tolerations: [{operator: Exists}]
              containers:
                - name: ray-worker
                  resources: {limits: {nvidia.com/gpu: "8"}}
`

// Run from a NeMo-RL checkout (here from its examples/ folder), a recipe
// inside it is mapped by its path below the checkout, with no recipes/
// folder and no --recipe-root; --recipe-root overrides; under --root the
// working directory's ancestors are not looked at.
func TestRecipeRootIsTheCheckoutTheCommandRunsIn(t *testing.T) {
	top := t.TempDir()
	co := filepath.Join(top, "nemo-rl")
	rec := filepath.Join(co, "examples", "configs", "mine", "sft-1n8g.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(rec), 0o755))
	require.NoError(t, os.WriteFile(rec, []byte("cluster: {num_nodes: 1, gpus_per_node: 8}\n"), 0o644))
	prof := filepath.Join(top, "p.infra.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(checkoutProfile), 0o644))
	outside := filepath.Join(top, "elsewhere.yaml")
	require.NoError(t, os.WriteFile(outside, []byte("cluster: {num_nodes: 1, gpus_per_node: 8}\n"), 0o644))
	t.Chdir(filepath.Join(co, "examples"))

	code, out, errOut := clirun.Run("render", "configs/mine/sft-1n8g.yaml", "--infra", prof, "--user", "alice")
	require.Equal(t, cli.ExitOK, code, errOut)
	require.Contains(t, out, "--config examples/configs/mine/sft-1n8g.yaml")
	require.Contains(t, errOut, "rewritten to --config examples/configs/mine/sft-1n8g.yaml")

	code, _, errOut = clirun.Run("render", rec, "--infra", prof, "--user", "alice", "--recipe-root", top)
	require.Equal(t, cli.ExitOK, code, errOut)
	require.Contains(t, errOut, "rewritten to --config nemo-rl/examples/configs/mine/sft-1n8g.yaml", "--recipe-root wins over the checkout")

	inRoot := filepath.Join(co, "p.infra.yaml")
	require.NoError(t, os.WriteFile(inRoot, []byte(checkoutProfile), 0o644))
	code, _, errOut = clirun.Run("render", "configs/mine/sft-1n8g.yaml", "--infra", inRoot, "--user", "alice", "--root", co)
	require.Equal(t, cli.ExitError, code, "under --root the checkout is not looked for")
	require.Contains(t, errOut, "the pod reads --config examples/configs/grpo_math_1B.yaml but the checked recipe is configs/mine/sft-1n8g.yaml")

	code, _, errOut = clirun.Run("render", outside, "--infra", prof, "--user", "alice")
	require.Equal(t, cli.ExitError, code, "a recipe outside the checkout is not mapped through it")
	require.Contains(t, errOut, "the pod reads --config examples/configs/grpo_math_1B.yaml but the checked recipe is "+filepath.ToSlash(outside))
}
