package renderall_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// A run whose profile has MultiKueue dispatch it renders in a runs
// repository byte for byte as `nrl-k8s render` prints it, spec.managedBy
// included.
func TestRenderAllDispatchedRun(t *testing.T) {
	tmp, repo := fixture(t)
	write(t, filepath.Join(repo, "runs/mk/mk.infra.yaml"),
		"defaults: [../../../../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml]\nscheduler: {kind: kai, queue: rl, kueue: {queue: lab-queue, dispatch: multikueue}}\n")
	write(t, filepath.Join(repo, "runs/mk/run.yaml"), strings.Join([]string{
		"apiVersion: nemo-rl.nvidia.com/v1alpha1", "kind: NemoRLRun", "metadata:", "  name: mk", "spec:",
		"  recipe: ../../../../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
		"  profile: mk.infra.yaml", "  mode: rayjob", "  user: alice", "  namespace: rl-team", ""}, "\n"))
	runs, err := renderall.Discover(source.Disk{}, repo)
	require.NoError(t, err)
	res := renderall.Render(source.Disk{}, runs)
	require.Empty(t, res.Failed(), "%v", res.Diags)

	code, rendered, stderr := clirun.Run("render",
		filepath.Join(tmp, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"),
		"--infra", filepath.Join(repo, "runs/mk/mk.infra.yaml"),
		"--user", "alice", "--mode", "rayjob", "-n", "rl-team", "--name", "mk")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Equal(t, rendered, string(res.Files["mk"]))
	assert.Contains(t, rendered, "\n  managedBy: kueue.x-k8s.io/multikueue\n")
}
