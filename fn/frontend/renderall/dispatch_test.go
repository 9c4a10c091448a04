package renderall_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// A run whose profile has MultiKueue dispatch it is written as two files:
// manifests/mk.yaml the manager's job object, manifests/workers/mk.yaml
// the rest, each byte for byte its documents of `nrl-k8s render`; with
// --flux, the manager's Kustomization and the workers'. Stopped, the
// manager has nothing (its file goes, its build is empty) and the workers
// keep the bundle; removed, the workers' build is empty too; deleted, its
// Flux files go. The other runs have no worker file.
func TestRenderAllDispatchedRun(t *testing.T) {
	tmp, repo := fixture(t)
	runFile, spec := dispatchedRun(t, repo)
	code, out, stderr := clirun.Run("render",
		filepath.Join(tmp, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"),
		"--infra", filepath.Join(repo, "runs/mk/mk.infra.yaml"),
		"--user", "alice", "--mode", "rayjob", "-n", "rl-team", "--name", "mk")
	require.Equal(t, cli.ExitOK, code, stderr)
	var manager, workers string
	for _, doc := range strings.Split(out, "---\n")[1:] {
		if strings.Contains(doc, "\n  managedBy: kueue.x-k8s.io/multikueue\n") {
			manager += "---\n" + doc
		} else {
			workers += "---\n" + doc
		}
	}
	require.Contains(t, manager, "kind: RayJob\n")
	require.Contains(t, workers, "kind: ComputeDomain\n")

	renderAll := func(state string) string {
		t.Helper()
		if state != "" {
			write(t, runFile, spec+"  state: "+state+"\n")
		}
		commit(t, tmp, "the run")
		code, stdout, stderr := clirun.Run("render-all", repo, "--flux", "team-a-runs")
		require.Equal(t, cli.ExitOK, code, stderr)
		commit(t, tmp, "render-all")
		return stdout
	}
	read := func(rel string) string { return testenv.ReadFile(t, filepath.Join(repo, rel)) }
	renderAll("")
	assert.Equal(t, manager, read("manifests/mk.yaml"))
	assert.Equal(t, workers, read("manifests/workers/mk.yaml"))
	entries, err := os.ReadDir(filepath.Join(repo, "manifests/workers"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the runs MultiKueue does not dispatch have no worker bundle")
	assert.Equal(t, string(renderall.FluxWorkersBuild("mk", true)), read("flux/mk/workers/kustomization.yaml"))
	assert.Contains(t, read("flux/mk/workers/kustomization.yaml"), "resources:\n- ../../../manifests/workers/mk.yaml\n")
	assert.Contains(t, read("flux-runs/mk.yaml"), "\n  path: ./examples/runs-repo/flux/mk\n")
	ks := read("flux-workers/mk.yaml")
	assert.Contains(t, ks, "\n  path: ./examples/runs-repo/flux/mk/workers\n")
	assert.NotContains(t, ks, "healthChecks:", "the bundle has no RayJob")
	assert.Equal(t, settings(t, []byte(read("flux-runs/mk.yaml"))), settings(t, []byte(ks)), "the workers' Kustomization has the run's settings")
	code, _, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs", "--check")
	assert.Equal(t, cli.ExitOK, code, "--check of what render-all wrote: %s", stderr)

	stdout := renderAll("stopped")
	assert.Contains(t, stdout, "removed examples/runs-repo/manifests/mk.yaml (the run renders no object for this cluster)\n")
	assert.NoFileExists(t, filepath.Join(repo, "manifests/mk.yaml"))
	assert.Contains(t, read("manifests/workers/mk.yaml"), "nemo-rl.nvidia.com/state: stopped")
	assert.Contains(t, read("flux/mk/kustomization.yaml"), "\nresources: []\n", "the manager prunes the RayJob")

	stdout = renderAll("removed")
	assert.Contains(t, stdout, "removed examples/runs-repo/manifests/workers/mk.yaml (the run is state: removed)\n")
	assert.Equal(t, string(renderall.FluxWorkersBuild("mk", false)), read("flux/mk/workers/kustomization.yaml"))
	assert.Contains(t, read("flux/mk/workers/kustomization.yaml"), "\nresources: []\n", "every worker prunes the bundle")

	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs/mk")))
	stdout = renderAll("")
	assert.Contains(t, stdout, "removed examples/runs-repo/flux-workers/mk.yaml (no run runs/mk)\n")
	assert.NoDirExists(t, filepath.Join(repo, "flux/mk"))
}

// dispatchedRun adds run mk, which its profile has MultiKueue dispatch, to
// the runs repository: its run file and that file's content.
func dispatchedRun(t *testing.T, repo string) (runFile, spec string) {
	t.Helper()
	write(t, filepath.Join(repo, "runs/mk/mk.infra.yaml"),
		"defaults: [../../../../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml]\nscheduler: {kind: kai, queue: rl, kueue: {queue: lab-queue, dispatch: multikueue}}\n")
	runFile = filepath.Join(repo, "runs/mk/run.yaml")
	spec = strings.Join([]string{
		"apiVersion: nemo-rl.nvidia.com/v1alpha1", "kind: NemoRLRun", "metadata:", "  name: mk", "spec:",
		"  recipe: ../../../../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
		"  profile: mk.infra.yaml", "  mode: rayjob", "  user: alice", "  namespace: rl-team", ""}, "\n")
	write(t, runFile, spec)
	return runFile, spec
}
