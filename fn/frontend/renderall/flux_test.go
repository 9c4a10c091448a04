package renderall_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The shipped Kustomization is what render-all writes for its example run,
// byte for byte (regenerate with `make golden`): one rule in one place.
func TestShippedKustomizationIsGenerated(t *testing.T) {
	golden.File(t, filepath.Join(testenv.RepoRoot(t), renderall.ShippedKustomizationFile), renderall.ShippedKustomization())
}

// settings is a Kustomization without what names its run.
func settings(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var k map[string]any
	require.NoError(t, yaml.UnmarshalStrict(data, &k))
	delete(k["metadata"].(map[string]any), "name")
	spec := k["spec"].(map[string]any)
	for _, f := range []string{"path", "sourceRef", "healthChecks"} {
		delete(spec, f)
	}
	return k
}

func commit(t *testing.T, dir, msg string) {
	t.Helper()
	testenv.GitAdd(t, dir)
	out, err := exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", msg).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// render-all --flux writes each run's Flux folder and Kustomization, with
// the shipped settings, the run's own path and health checks; a second
// run changes nothing; --check refuses a hand-edited and a stray file by
// name.
func TestRenderAllFluxFiles(t *testing.T) {
	tmp, repo := fixture(t)
	code, stdout, stderr := clirun.Run("render-all", repo, "--flux", "team-a-runs")
	require.Equal(t, cli.ExitOK, code, stderr)
	for _, run := range []string{"qwen3-math-4n", "ultra-48n", "ultra-64n", "ultra-tools"} {
		assert.Contains(t, stdout, "wrote examples/runs-repo/flux/"+run+"/kustomization.yaml\n")
		assert.Contains(t, stdout, "wrote examples/runs-repo/flux-runs/"+run+".yaml\n")
		assert.Equal(t, string(renderall.FluxBuild(run, false)), testenv.ReadFile(t, filepath.Join(repo, "flux", run, "kustomization.yaml")))
	}
	assert.Contains(t, testenv.ReadFile(t, filepath.Join(repo, "flux/ultra-64n/kustomization.yaml")), "resources:\n- ../../manifests/ultra-64n.yaml\n")

	ks := []byte(testenv.ReadFile(t, filepath.Join(repo, "flux-runs/qwen3-math-4n.yaml")))
	assert.Equal(t, settings(t, renderall.ShippedKustomization()), settings(t, ks), "settings differ from gitops/flux/kustomization.yaml")
	var k struct {
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Path         string
			SourceRef    map[string]string `json:"sourceRef"`
			HealthChecks []map[string]string
		}
	}
	require.NoError(t, yaml.Unmarshal(ks, &k))
	assert.Equal(t, "qwen3-math-4n", k.Metadata.Name)
	assert.Equal(t, "flux-system", k.Metadata.Namespace)
	assert.Equal(t, "./examples/runs-repo/flux/qwen3-math-4n", k.Spec.Path, "relative to the Git repository's root")
	assert.Equal(t, map[string]string{"kind": "GitRepository", "name": "team-a-runs"}, k.Spec.SourceRef)
	assert.Equal(t, []map[string]string{{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "qwen3-math-4n", "namespace": "rl-team"}}, k.Spec.HealthChecks)
	// A run without Ray objects of its own (the shared services) has no
	// health check; a raycluster run checks its RayCluster too.
	assert.NotContains(t, testenv.ReadFile(t, filepath.Join(repo, "flux-runs/ultra-tools.yaml")), "healthChecks:")
	assert.Contains(t, testenv.ReadFile(t, filepath.Join(repo, "flux-runs/ultra-64n.yaml")), "kind: RayCluster, name: ultra-64n-training")

	// Deterministic: a second run writes nothing, and --check passes.
	testenv.GitAdd(t, tmp)
	code, stdout, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Equal(t, "4 run(s): 4 rendered, 0 changed, 0 failed\n", stdout)
	code, stdout, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs", "--check", "--base", repo)
	require.Equal(t, cli.ExitOK, code, stdout+stderr)

	// Another namespace and interval change every Kustomization.
	code, _, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs", "--flux-namespace", "flux-runs", "--flux-interval", "5m", "--check", "--base", repo)
	require.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "examples/runs-repo/flux-runs/ultra-48n.yaml: stale")
	assert.Contains(t, stderr, "4 Flux file(s) out of date: run `nrl-k8s render-all "+filepath.ToSlash(repo)+" --flux team-a-runs --flux-namespace flux-runs --flux-interval 5m`")

	// A hand edit and a stray are refused by name.
	edited := filepath.Join(repo, "flux-runs/ultra-48n.yaml")
	write(t, edited, strings.Replace(testenv.ReadFile(t, edited), "prune: true", "prune: false", 1))
	write(t, filepath.Join(repo, "flux-runs/extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	write(t, filepath.Join(repo, "flux/ultra-48n/patch.yaml"), "kind: ConfigMap\n")
	testenv.GitAdd(t, tmp)
	code, stdout, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs", "--check", "--base", repo)
	require.Equal(t, cli.ExitError, code)
	assert.Contains(t, stdout, "-  prune: false\n+  prune: true\n")
	assert.Contains(t, stderr, "examples/runs-repo/flux-runs/ultra-48n.yaml: stale (differs from what render-all writes; not edited by hand)")
	assert.Contains(t, stderr, "examples/runs-repo/flux-runs/extra.yaml: not a Flux file render-all writes")
	assert.Contains(t, stderr, "examples/runs-repo/flux/ultra-48n/patch.yaml: not a Flux file render-all writes")
	code, _, stderr = clirun.Run("render-all", repo, "--flux", "team-a-runs")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "flux-runs/extra.yaml: not a Flux file render-all writes (flux/<run>/kustomization.yaml, flux/<run>/workers/kustomization.yaml, flux-runs/<run>.yaml, flux-workers/<run>.yaml, each opening with \"# Written by nrl-k8s render-all --flux\"); left alone")
	assert.FileExists(t, filepath.Join(repo, "flux-runs/extra.yaml"), "a file render-all did not write is never deleted")
	assert.NotContains(t, testenv.ReadFile(t, edited), "prune: false")
}

// The removal protocol: state: removed renders no manifest and an empty
// build (its Kustomization prunes every object); deleting a run file is
// refused unless the base branch says removed; once it does, the run
// file goes and render-all removes the run's Flux files.
func TestRenderAllFluxRemoval(t *testing.T) {
	tmp, repo := fixture(t)
	flux := []string{"--flux", "team-a-runs"}
	code, _, stderr := clirun.Run(append([]string{"render-all", repo}, flux...)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	commit(t, tmp, "runs with Flux")

	before := t.TempDir()
	testenv.CopyDir(t, filepath.Join(repo, "manifests"), before)
	runFile := filepath.Join(repo, "runs/ultra-48n/run.yaml")
	write(t, runFile, strings.Replace(testenv.ReadFile(t, runFile), "  mode: rayjob\n", "  mode: rayjob\n  state: removed\n", 1))
	code, stdout, stderr := clirun.Run(append([]string{"render-all", repo}, flux...)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "removed examples/runs-repo/manifests/ultra-48n.yaml (the run is state: removed)\n")
	assert.NoFileExists(t, filepath.Join(repo, "manifests/ultra-48n.yaml"))
	assert.Equal(t, string(renderall.FluxBuild("ultra-48n", true)), testenv.ReadFile(t, filepath.Join(repo, "flux/ultra-48n/kustomization.yaml")))
	assert.Contains(t, string(renderall.FluxBuild("ultra-48n", true)), "\nresources: []\n")
	ks := testenv.ReadFile(t, filepath.Join(repo, "flux-runs/ultra-48n.yaml"))
	assert.NotContains(t, ks, "healthChecks:", "a removed run has nothing to wait for")
	assert.Contains(t, ks, "prune: true")
	// The review summary shows the run removed, not failed.
	testenv.GitAdd(t, tmp)
	code, stdout, stderr = clirun.Run("diff", before, repo)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "ultra-48n: removed run")
	commit(t, tmp, "ultra-48n removed")

	// Deleting a run file whose base state is not removed is refused, by
	// name and with the way; deleting the removed one is not.
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs/qwen3-math-4n")))
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs/ultra-48n")))
	testenv.GitAdd(t, tmp)
	code, _, stderr = clirun.Run(append([]string{"render-all", repo, "--check", "--base-ref", "HEAD"}, flux...)...)
	require.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "qwen3-math-4n: refused: runs/qwen3-math-4n/run.yaml is deleted, but on the base branch the run is not state: removed")
	assert.Contains(t, stderr, "set spec.state: removed instead")
	assert.NotContains(t, stderr, "ultra-48n: refused")
	assert.Contains(t, stderr, "examples/runs-repo/flux-runs/ultra-48n.yaml: orphaned")

	// Without Flux generation, deleting a run file is Argo CD's path
	// (its finalizer deletes the run's objects): not refused. The Flux
	// files, unchecked without --flux, are.
	code, _, stderr = clirun.Run("render-all", repo, "--check", "--base-ref", "HEAD")
	assert.NotContains(t, stderr, "refused: runs/")
	assert.Equal(t, cli.ExitError, code)

	// The removed run goes: render-all removes its Flux files.
	require.NoError(t, exec.Command("git", "-C", tmp, "checkout", "-q", "HEAD", "--", "examples/runs-repo/runs/qwen3-math-4n").Run())
	code, stdout, stderr = clirun.Run(append([]string{"render-all", repo}, flux...)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "removed examples/runs-repo/flux/ultra-48n/kustomization.yaml (no run runs/ultra-48n)\n")
	assert.Contains(t, stdout, "removed examples/runs-repo/flux-runs/ultra-48n.yaml (no run runs/ultra-48n)\n")
	assert.NoDirExists(t, filepath.Join(repo, "flux/ultra-48n"))
	testenv.GitAdd(t, tmp)
	code, stdout, stderr = clirun.Run(append([]string{"render-all", repo, "--check", "--base-ref", "HEAD"}, flux...)...)
	assert.Equal(t, cli.ExitOK, code, stdout+stderr)
}

func TestRenderAllFluxUsage(t *testing.T) {
	_, repo := fixture(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"source not a name", []string{"--flux", "Team A"}, `--flux "Team A": `},
		{"namespace not a label", []string{"--flux", "s", "--flux-namespace", "a.b"}, `--flux-namespace "a.b": `},
		{"interval", []string{"--flux", "s", "--flux-interval", "10 minutes"}, `--flux-interval "10 minutes": expected a duration as Flux spells it`},
		{"namespace without source", []string{"--flux-namespace", "x"}, "--flux-namespace and --flux-interval go with --flux SOURCE"},
		{"with --out", []string{"--flux", "s", "--out", t.TempDir()}, "--flux and --out: give one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := clirun.Run(append([]string{"render-all", repo}, c.args...)...)
			assert.Equal(t, cli.ExitUsage, code)
			assert.Contains(t, stderr, c.want)
		})
	}
}
