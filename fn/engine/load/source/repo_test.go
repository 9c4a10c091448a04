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

// repo is a git work tree at dir/repo tracking a.yaml and sub/b.yaml,
// with untracked.yaml written beside them after the commit.
func repo(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	for _, f := range []string{"a.yaml", "sub/b.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(f), 0o644))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "c"}} {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "untracked.yaml"), []byte("u"), 0o644))
	return root
}

// In a git work tree only the files git tracks are read (a file an
// earlier CI step wrote is not the pull request's), unless untracked files
// are asked for; outside a work tree, and outside the root, the rule says
// nothing.
func TestConfineRepo(t *testing.T) {
	root := repo(t)
	plain := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(plain, "x.yaml"), []byte("x"), 0o644))
	cases := []struct {
		name, root, file string
		untracked        bool
		tracked          bool
		err              string
	}{
		{name: "a tracked file", root: root, file: "a.yaml", tracked: true},
		{name: "a tracked file below", root: filepath.Join(root, "sub"), file: "b.yaml", tracked: true},
		{name: "an untracked file", root: root, file: "untracked.yaml", err: "untracked.yaml: not tracked by git; refused"},
		{name: "an untracked file, asked for", root: root, file: "untracked.yaml", untracked: true, tracked: true},
		{name: "not a work tree", root: plain, file: "x.yaml", tracked: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := source.ConfineRepo(c.root, c.untracked)
			require.NoError(t, err)
			p := filepath.Join(c.root, c.file)
			assert.Equal(t, c.tracked, d.Tracked(p))
			_, err = d.ReadFile(p)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			assert.NoError(t, err)
		})
	}
	d, err := source.ConfineRepo(root, false)
	require.NoError(t, err)
	assert.True(t, d.Tracked("/etc/passwd"), "outside the root the git rule says nothing")
	assert.True(t, source.Disk{}.Tracked(filepath.Join(root, "untracked.yaml")), "an unconfined disk reads every file")
}

// WorkTreeOf finds the nearest .git, a directory or a linked worktree's
// file, without running git.
func TestWorkTreeOf(t *testing.T) {
	root := repo(t)
	linked := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: elsewhere\n"), 0o644))
	for _, c := range []struct {
		dir, want string
		ok        bool
	}{
		{root, root, true},
		{filepath.Join(root, "sub", "deeper"), root, true},
		{linked, linked, true},
		{"/", "", false},
	} {
		got, ok := source.WorkTreeOf(c.dir)
		assert.Equal(t, c.ok, ok, c.dir)
		assert.Equal(t, c.want, got, c.dir)
	}
}

// WriteFile replaces a regular file whole, creating its directory, and
// RemoveFile deletes one; neither goes through a link, replaces what is
// not a regular file, or leaves the root.
func TestWriteAndRemoveFile(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "old.yaml"), []byte("old"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "target.yaml"), filepath.Join(root, "link.yaml")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linkdir")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir.yaml"), 0o755))
	d, err := source.Confine(root)
	require.NoError(t, err)
	in := func(p string) string { return filepath.Join(root, p) }
	cases := []struct {
		name, file string
		write, rm  string // the error each gives ("" none)
	}{
		{name: "a new file in a new directory", file: in("new/dir/f.yaml")},
		{name: "an existing file", file: in("old.yaml")},
		{name: "a symlink", file: in("link.yaml"), write: "link.yaml: is a symlink; refused", rm: "link.yaml: is a symlink; refused"},
		{name: "a directory", file: in("dir.yaml"), write: "dir.yaml: is not a regular file; refused", rm: "dir.yaml: is not a regular file; refused"},
		{name: "through a linked directory", file: in("linkdir/f.yaml"), write: "is a symlink; refused", rm: "is a symlink; refused"},
		{name: "outside the root", file: filepath.Join(outside, "f.yaml"), write: "refused", rm: "refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := d.WriteFile(c.file, []byte("new"))
			if c.write != "" {
				assert.ErrorContains(t, err, c.write)
			} else {
				require.NoError(t, err)
				b, err := os.ReadFile(c.file)
				require.NoError(t, err)
				assert.Equal(t, "new", string(b))
				entries, err := os.ReadDir(filepath.Dir(c.file))
				require.NoError(t, err)
				for _, e := range entries {
					assert.NotContains(t, e.Name(), "nrl-k8s-tmp", "no temporary file is left")
				}
			}
			err = d.RemoveFile(c.file)
			if c.rm != "" {
				assert.ErrorContains(t, err, c.rm)
				return
			}
			require.NoError(t, err)
			_, err = os.Lstat(c.file)
			assert.ErrorIs(t, err, os.ErrNotExist)
			assert.NoError(t, d.RemoveFile(c.file), "a missing file is not an error")
		})
	}
	_, err = os.Stat(filepath.Join(outside, "target.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was written through the link")
	assert.NoError(t, d.RemoveFile(in("no/such/dir/f.yaml")), "a missing directory is not an error")
}
