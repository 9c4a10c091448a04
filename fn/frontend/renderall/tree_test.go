package renderall

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// mkTree writes files below dir: content "->x" is a link to x, "|" a fifo,
// "/" a directory.
func mkTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		file := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		switch {
		case len(content) > 2 && content[:2] == "->":
			require.NoError(t, os.Symlink(content[2:], file))
		case content == "|":
			require.NoError(t, syscall.Mkfifo(file, 0o644))
		case content == "/":
			require.NoError(t, os.MkdirAll(file, 0o755))
		default:
			require.NoError(t, os.WriteFile(file, []byte(content), 0o644))
		}
	}
}

// The output directory is a real directory or absent; the default one
// must resolve inside the root, an --out the user named need not.
func TestCheckOutDir(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string
		out        string // below the root; "../x" outside it
		defaultOut bool
		err        string
	}{
		{name: "absent", out: "manifests", defaultOut: true},
		{name: "a directory", files: map[string]string{"manifests": "/"}, out: "manifests", defaultOut: true},
		{name: "a symlink", files: map[string]string{"real": "/", "manifests": "->real"}, out: "manifests", err: "manifests: is a symlink; refused"},
		{name: "a file", files: map[string]string{"manifests": "x"}, out: "manifests", err: "manifests: not a directory; expected the output directory"},
		{name: "the default below a linked folder out of the root", files: map[string]string{"lab": "->../elsewhere"}, out: "lab/manifests", defaultOut: true, err: "not inside the root"},
		{name: "the default out of the root", out: "../elsewhere/manifests", defaultOut: true, err: "not inside the root"},
		{name: "a named --out out of the root", out: "../elsewhere/manifests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "repo")
			require.NoError(t, os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755))
			require.NoError(t, os.MkdirAll(root, 0o755))
			mkTree(t, root, tc.files)
			disk, err := source.Confine(root)
			require.NoError(t, err)
			err = CheckOutDir(disk, filepath.Join(root, tc.out), tc.defaultOut)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// ReadManifests reads out/*.yaml by run name, leaves other files, folders
// and the overlay's kustomization.yaml alone, refuses links and special
// files unread, and in a git work tree leaves untracked files unread.
func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{
		"out/a.yaml": "kind: A\n", "out/kustomization.yaml": "resources: []\n", "out/notes.txt": "x",
		"out/sub.yaml": "/", "out/link.yaml": "->a.yaml", "out/fifo.yaml": "|", "other.yaml": "x",
	})
	testenv.GitCheckout(t, dir)
	mkTree(t, dir, map[string]string{"out/new.yaml": "kind: N\n"})
	disk, err := source.ConfineRepo(dir, false)
	require.NoError(t, err)
	files, refused, untracked, err := ReadManifests(disk, filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"a": []byte("kind: A\n")}, files)
	assert.ElementsMatch(t, []Refused{{Name: "link", What: "is a symlink"}, {Name: "fifo", What: "is not a regular file"}}, refused)
	assert.Equal(t, []string{"new"}, untracked)
	assert.True(t, RefusedRun(refused, "link"))
	assert.False(t, RefusedRun(refused, "a"))

	files, refused, untracked, err = ReadManifests(disk, filepath.Join(dir, "absent"))
	require.NoError(t, err)
	assert.Empty(t, files)
	assert.Empty(t, refused)
	assert.Empty(t, untracked)
}

// Diff headers name the output directory relative to the git work tree,
// else to the runs repository, else as given.
func TestDisplayDir(t *testing.T) {
	git, plain := t.TempDir(), t.TempDir()
	mkTree(t, git, map[string]string{"lab/runs": "/", ".git": "/"})
	cases := []struct {
		name, root, out, want string
	}{
		{"in a work tree", filepath.Join(git, "lab"), filepath.Join(git, "lab", "manifests"), "lab/manifests"},
		{"no work tree", plain, filepath.Join(plain, "manifests"), "manifests"},
		{"outside the root", plain, filepath.Join(git, "x", "..", "y"), filepath.ToSlash(filepath.Join(git, "y"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, DisplayDir(tc.root, tc.out)) })
	}
}

// Objects are told apart as kustomize does (group, kind, namespace,
// name); a document without a kind is none, and reading stops at the
// first that does not decode.
func TestObjectIDs(t *testing.T) {
	cases := []struct {
		name, data string
		want       []string
	}{
		{"group and core", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
			[]string{"Deployment.apps n/d", "Service /s"}},
		{"no kind", "metadata: {name: x}\n---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n", []string{"A /a"}},
		{"stops at a bad document", "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkind: [\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n", []string{"A /a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, objectIDs([]byte(tc.data))) })
	}
}

// The kustomization lists the runs that rendered an object and the failed
// runs whose committed file is kept, in name order; a removed run, a run
// with no object here and a failed run with nothing committed are not in
// it. An object in more than one listed manifest is shared.
func TestKustomizationAndShared(t *testing.T) {
	const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\n"
	res := &Result{
		Runs:    []string{"a", "b", "c", "d", "e"},
		Files:   map[string][]byte{"a": []byte(svc + "---\n" + svc), "b": {}},
		Removed: map[string]bool{"c": true},
	}
	committed := map[string][]byte{"c": []byte(svc), "d": []byte(svc)}
	assert.Equal(t, []string{"a", "d"}, kustomizationRuns(res, committed))
	assert.Contains(t, string(Kustomization(res, committed)), "kind: Kustomization\nresources:\n- a.yaml\n- d.yaml\n")
	assert.Equal(t, []Shared{{Object: "Service n/s", Runs: []string{"a", "d"}}}, SharedObjects(res, committed), "a's second copy is one object")
	assert.Contains(t, string(Kustomization(&Result{}, nil)), "resources: []\n")
	assert.Empty(t, SharedObjects(res, map[string][]byte{}))
}

// Each drift says what it is and what render-all would do; Orphans
// counts the drifts whose run no longer exists.
func TestDescribeChangeAndOrphans(t *testing.T) {
	for c, want := range map[Change]string{Stale: "stale", Missing: "missing", Gone: "state: removed", Elsewhere: "for this cluster", Orphan: "orphaned"} {
		assert.Contains(t, DescribeChange(c), want, c)
	}
	assert.Equal(t, 2, Orphans([]Drift{{Change: Orphan}, {Change: Stale}, {Change: Orphan}, {Change: Gone}}))
}
