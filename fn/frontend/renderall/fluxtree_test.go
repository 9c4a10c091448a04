package renderall

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// ReadFlux reads what git tracks below the Flux folders at any depth,
// keyed relative to the runs repository; a link or special file, and a
// linked Flux folder itself, is a stray, never read or followed.
func TestReadFlux(t *testing.T) {
	cases := []struct {
		name      string
		files     map[string]string // tracked
		untracked map[string]string
		want      []string
		strays    []string
	}{
		{name: "none"},
		{name: "every depth of every folder", files: map[string]string{
			"flux/a/kustomization.yaml": "x", "flux/a/workers/kustomization.yaml": "x", "flux-runs/a.yaml": "x", "flux-workers/a.yaml": "x", "other/z.yaml": "x",
		}, want: []string{"flux-runs/a.yaml", "flux-workers/a.yaml", "flux/a/kustomization.yaml", "flux/a/workers/kustomization.yaml"}},
		{name: "untracked files are not read", files: map[string]string{"flux-runs/a.yaml": "x"}, untracked: map[string]string{"flux-runs/b.yaml": "x"},
			want: []string{"flux-runs/a.yaml"}},
		{name: "a link is a stray", files: map[string]string{"flux-runs/a.yaml": "x", "flux-runs/b.yaml": "->a.yaml"},
			want: []string{"flux-runs/a.yaml"}, strays: []string{"flux-runs/b.yaml"}},
		{name: "a linked Flux folder is a stray", files: map[string]string{"elsewhere/a.yaml": "x", "flux-runs": "->elsewhere"},
			strays: []string{"flux-runs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkTree(t, dir, tc.files)
			testenv.GitCheckout(t, dir)
			mkTree(t, dir, tc.untracked)
			disk, err := source.ConfineRepo(dir, false)
			require.NoError(t, err)
			files, strays, err := ReadFlux(disk, dir)
			require.NoError(t, err)
			var got []string
			for rel, data := range files {
				got = append(got, rel)
				assert.Equal(t, "x", string(data), rel)
			}
			assert.ElementsMatch(t, tc.want, got)
			assert.Equal(t, tc.strays, strays)
		})
	}
}

// Without --flux, committed Flux files are unchecked: --check refuses
// them, naming the folders, and a render leaves them alone.
func TestFluxTreeWithoutFlux(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		check  bool
		failed bool
		stderr string
	}{
		{name: "no Flux files"},
		{name: "no Flux files under check", check: true},
		{name: "refused under check", files: map[string]string{"flux-runs/a.yaml": "x"}, check: true, failed: true,
			stderr: "flux/, flux-runs/, flux-workers/: hold files render-all does not check without --flux; refused: a Flux Kustomization applies them, so pass --flux SOURCE"},
		{name: "a stray alone is refused", files: map[string]string{"flux/a/x": "->../../y"}, check: true, failed: true, stderr: "hold files render-all does not check without --flux; refused"},
		{name: "left alone by a render", files: map[string]string{"flux-runs/a.yaml": "x"},
			stderr: "flux/, flux-runs/, flux-workers/: hold files render-all keeps only with --flux SOURCE; left alone\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkTree(t, dir, tc.files)
			testenv.GitCheckout(t, dir)
			disk, err := source.ConfineRepo(dir, false)
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			failed, err := Options{Disk: disk, Dir: dir, Check: tc.check, Stdout: &stdout, Stderr: &stderr}.fluxTree(&Result{})
			require.NoError(t, err)
			assert.Equal(t, tc.failed, failed)
			assert.Empty(t, stdout.String())
			if tc.stderr == "" {
				assert.Empty(t, stderr.String())
				return
			}
			assert.Contains(t, stderr.String(), tc.stderr)
		})
	}
}

// The run folders of a base checkout's flux/, and a reader of their
// builds: a build that is not there reads as nothing.
func TestFluxRunsOnDisk(t *testing.T) {
	dir := t.TempDir()
	runs, read, err := fluxRunsOnDisk(source.Disk{}, dir)
	require.NoError(t, err)
	assert.Nil(t, runs, "no flux/ folder")
	assert.Nil(t, read)

	mkTree(t, dir, map[string]string{"flux/a/kustomization.yaml": "k", "flux/b": "/", "flux/notes.txt": "x"})
	runs, read, err = fluxRunsOnDisk(source.Disk{}, dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, runs)
	data, err := read("a/kustomization.yaml")
	require.NoError(t, err)
	assert.Equal(t, "k", string(data))
	data, err = read("b/kustomization.yaml")
	require.NoError(t, err)
	assert.Nil(t, data)
}

// Each Flux drift says what it is and what render-all would do.
func TestDescribeFlux(t *testing.T) {
	for c, want := range map[Change]string{Stale: "stale (differs from what render-all writes; not edited by hand)", Missing: "missing: render-all would write it", Orphan: "orphaned (its run no longer exists)"} {
		assert.Contains(t, describeFlux(c), want, c)
	}
}
