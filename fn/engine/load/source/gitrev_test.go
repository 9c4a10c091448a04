package source_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// ReadBlobs reads every regular file of a directory at a revision with one
// git process, as committed there (not as the work tree holds it now), and
// refuses an entry that is not a regular file.
func TestReadBlobs(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "m"), 0o755))
	files := map[string]string{"a.yaml": "a: 1\n", "b.yaml": "", "c.yaml": "line\nwith no final newline"}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "m", name), []byte(data), 0o644))
	}
	require.NoError(t, os.Symlink("a.yaml", filepath.Join(dir, "m", "link.yaml")))
	git("add", "-A")
	git("commit", "-qm", "base")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m", "a.yaml"), []byte("changed in the work tree\n"), 0o644))

	rev, err := source.ResolveRevision(dir, "main")
	require.NoError(t, err)
	entries, err := rev.ReadDir("m")
	require.NoError(t, err)
	var regular []source.TreeEntry
	for _, e := range entries {
		if e.Regular {
			regular = append(regular, e)
		}
	}
	require.Len(t, regular, 3)
	got, err := rev.ReadBlobs(regular)
	require.NoError(t, err)
	want := map[string][]byte{}
	for name, data := range files {
		want[name] = []byte(data)
	}
	assert.Equal(t, want, got)

	_, err = rev.ReadBlobs(entries)
	require.ErrorIs(t, err, source.ErrRefused, "the symlink is not a file")
}
