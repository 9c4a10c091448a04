package renderall_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// A sync of manifests/ applies more than its top: a Flux Kustomization on
// the path (or kustomize, or kubectl apply -R) applies every subfolder,
// and what a symlink points at. Every file below a subfolder, whatever its
// name, and every symlink is a stray; a README at the top is not read.
func TestStraysAtAnyDepth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, out string)
		stray string // "" for none
	}{
		{"a README at the top", func(t *testing.T, out string) { writeStray(t, out, "README.md") }, ""},
		{"a run's manifest at the top", func(t *testing.T, out string) { writeStray(t, out, "good.yaml") }, ""},
		{"a yml at the top", func(t *testing.T, out string) { writeStray(t, out, "pwn.yml") }, "pwn.yml"},
		{"a yaml in a subfolder", func(t *testing.T, out string) { writeStray(t, out, "team/pwn.yaml") }, "team/pwn.yaml"},
		{"a json three deep", func(t *testing.T, out string) { writeStray(t, out, "a/b/c/pwn.json") }, "a/b/c/pwn.json"},
		{"a README in a subfolder", func(t *testing.T, out string) { writeStray(t, out, "team/README.md") }, "team/README.md"},
		{"an odd name in a subfolder", func(t *testing.T, out string) { writeStray(t, out, "team/pwn\n.YAML ") }, "team/pwn\n.YAML "},
		{"a hidden subfolder", func(t *testing.T, out string) { writeStray(t, out, ".hidden/pwn.yaml") }, ".hidden/pwn.yaml"},
		{"a symlink at the top", func(t *testing.T, out string) { link(t, out, "/etc/hostname", "pwn.yml") }, "pwn.yml"},
		{"a symlink to a folder at the top", func(t *testing.T, out string) { link(t, out, "/etc", "etc") }, "etc"},
		{"a yaml symlink at the top: refused as a run's manifest", func(t *testing.T, out string) { link(t, out, "/etc/hostname", "good.yaml") }, ""},
		{"a symlink in a subfolder", func(t *testing.T, out string) { link(t, out, "../../x.yaml", "team/x.yaml") }, "team/x.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			tc.make(t, out)
			strays, err := renderall.Strays(source.Disk{}, out, &renderall.Result{}, nil, nil, false)
			require.NoError(t, err)
			if tc.stray == "" {
				assert.Empty(t, strays)
				return
			}
			require.Len(t, strays, 1)
			assert.Equal(t, tc.stray, strays[0].Path)
		})
	}
}

// A worker bundle of no run is judged as a manifest of no run is: one
// render-all did not write is a stray (one it wrote is an orphan, drift);
// a bundle of a run is CompareWorkers'; any other file below workers/ is a
// stray as in any subfolder.
func TestStraysOfWorkerBundles(t *testing.T) {
	const written = "kind: ConfigMap\nmetadata:\n  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n"
	for _, tc := range []struct {
		name, file, data string
		stray            string // "" for none
	}{
		{"a bundle of no run, not render-all's", "workers/gone.yaml", "kind: Namespace\n", "workers/gone.yaml"},
		{"a bundle of no run render-all wrote: an orphan", "workers/gone.yaml", written, ""},
		{"a bundle of a run, whoever wrote it", "workers/mk.yaml", "kind: Namespace\n", ""},
		{"a manifest of no run, not render-all's", "gone.yaml", "kind: Namespace\n", "gone.yaml"},
		{"a yml below workers", "workers/gone.yml", written, "workers/gone.yml"},
		{"a kustomization below workers", "workers/kustomization.yaml", "resources: []\n", "workers/kustomization.yaml"},
		{"a bundle a folder deeper", "workers/team/gone.yaml", written, "workers/team/gone.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			write(t, filepath.Join(out, filepath.FromSlash(tc.file)), tc.data)
			committed, _, _, err := renderall.ReadManifests(source.Disk{}, out)
			require.NoError(t, err)
			workers, _, _, err := renderall.ReadManifests(source.Disk{}, filepath.Join(out, renderall.WorkersDir))
			require.NoError(t, err)
			res := &renderall.Result{Runs: []string{"mk"}, Files: map[string][]byte{"mk": nil}}
			strays, err := renderall.Strays(source.Disk{}, out, res, committed, workers, false)
			require.NoError(t, err)
			var got []string
			for _, st := range strays {
				got = append(got, st.Path)
			}
			if tc.stray == "" {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, []string{tc.stray}, got)
		})
	}
}

// The files a dispatched run's removal or rename leaves behind, in
// manifests/workers/ and flux-workers/, are found as those at the top of
// manifests/ and flux-runs/ are: --check fails naming each; a plain
// render-all removes what it wrote and names, but keeps, the others.
func TestRenderAllWorkerStrays(t *testing.T) {
	tmp, repo := fixture(t)
	dispatchedRun(t, repo)
	commit(t, tmp, "a dispatched run")
	flux := []string{"render-all", repo, "--flux", "team-a-runs"}
	code, _, stderr := clirun.Run(flux...)
	require.Equal(t, cli.ExitOK, code, stderr)
	commit(t, tmp, "its render")
	read := func(rel string) string { return testenv.ReadFile(t, filepath.Join(repo, rel)) }
	// mk renamed to renamed (render-all's files), and files of nobody's.
	write(t, filepath.Join(repo, "manifests/workers/renamed.yaml"), read("manifests/workers/mk.yaml"))
	write(t, filepath.Join(repo, "flux-workers/renamed.yaml"), read("flux-workers/mk.yaml"))
	write(t, filepath.Join(repo, "manifests/workers/notes.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n")
	write(t, filepath.Join(repo, "flux-workers/extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n")
	commit(t, tmp, "strays")

	code, stdout, stderr := clirun.Run(append(flux, "--check")...)
	assert.Equal(t, cli.ExitError, code, stdout+stderr)
	for _, want := range []string{
		"examples/runs-repo/manifests/workers/renamed.yaml: orphaned",
		"examples/runs-repo/flux-workers/renamed.yaml: orphaned",
		"examples/runs-repo/manifests/workers/notes.yaml: no run runs/notes, and not written by render-all (objects without the app.kubernetes.io/managed-by: nrl-k8s label); refused: `kubectl apply -f examples/runs-repo/manifests/workers/` applies",
		"examples/runs-repo/flux-workers/extra.yaml: not a Flux file render-all writes (flux/<run>/kustomization.yaml, flux/<run>/workers/kustomization.yaml, flux-runs/<run>.yaml, flux-workers/<run>.yaml, each opening with",
		"(remove it, or move it out of flux/, flux-runs/, flux-workers/)",
	} {
		assert.Contains(t, stderr, want)
	}
	assert.Contains(t, stdout, "--- a/examples/runs-repo/manifests/workers/renamed.yaml\n+++ /dev/null\n")
	_, _, stderr = clirun.Run("render-all", repo, "--check")
	assert.Contains(t, stderr, "examples/runs-repo/flux/, examples/runs-repo/flux-runs/, examples/runs-repo/flux-workers/: hold files render-all does not check without --flux; refused")

	code, stdout, stderr = clirun.Run(flux...)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "removed examples/runs-repo/manifests/workers/renamed.yaml (no run runs/renamed)\n")
	assert.Contains(t, stdout, "removed examples/runs-repo/flux-workers/renamed.yaml (no run runs/renamed)\n")
	assert.Contains(t, stderr, "examples/runs-repo/manifests/workers/notes.yaml: no run runs/notes, and not written by render-all (objects without the app.kubernetes.io/managed-by: nrl-k8s label); left alone (render-all --check refuses it)\n")
	assert.Contains(t, stderr, "examples/runs-repo/flux-workers/extra.yaml: not a Flux file render-all writes")
	assert.NoFileExists(t, filepath.Join(repo, "manifests/workers/renamed.yaml"))
	assert.NoFileExists(t, filepath.Join(repo, "flux-workers/renamed.yaml"))
	assert.FileExists(t, filepath.Join(repo, "manifests/workers/notes.yaml"), "only files render-all wrote are deleted")
	assert.FileExists(t, filepath.Join(repo, "flux-workers/extra.yaml"))

	for _, f := range []string{"manifests/workers/notes.yaml", "flux-workers/extra.yaml"} {
		require.NoError(t, os.Remove(filepath.Join(repo, f)))
	}
	commit(t, tmp, "strays gone")
	code, stdout, stderr = clirun.Run(append(flux, "--check")...)
	assert.Equal(t, cli.ExitOK, code, stdout+stderr)
	assert.NotContains(t, stderr, "manifests/workers/")
}

func writeStray(t *testing.T, out, rel string) {
	t.Helper()
	p := filepath.Join(out, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("kind: Namespace\n"), 0o644))
}

func link(t *testing.T, out, target, rel string) {
	t.Helper()
	p := filepath.Join(out, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
}
