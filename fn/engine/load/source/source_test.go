package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// The confinement rule: inside the root, regular files, symlinks resolved
// and re-checked, a limited read; outside and missing read the same.
func TestConfine(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "repo")
	outside := filepath.Join(top, "secret.yaml")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(outside, []byte("SECRET"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "ok.yaml"), []byte("a: 1\n"), 0o644))
	require.NoError(t, os.Symlink("sub/ok.yaml", filepath.Join(root, "inside-link.yaml")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out-link.yaml")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "zero.yaml")))
	require.NoError(t, os.Symlink(filepath.Join(top, "nothing"), filepath.Join(root, "dangling.yaml")))
	big := strings.Repeat("#", source.MaxFileSize+1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.yaml"), []byte(big), 0o644))
	disk, err := source.Confine(root)
	require.NoError(t, err)
	in := func(p string) string { return filepath.ToSlash(filepath.Join(root, p)) }

	for _, tc := range []struct {
		name, path, want string
	}{
		{"relative escape", in("sub/../../secret.yaml"), "not a file inside the root; refused"},
		{"absolute outside", filepath.ToSlash(outside), "not a file inside the root; refused"},
		{"absolute system file", "/etc/passwd", "not a file inside the root; refused"},
		{"missing system file reads the same", "/etc/no-such-file", "not a file inside the root; refused"},
		{"link out of the root", in("out-link.yaml"), "not a file inside the root; refused"},
		{"link to a device", in("zero.yaml"), "not a file inside the root; refused"},
		{"dangling link out of the root reads as any path out of it", in("dangling.yaml"), "not a file inside the root; refused"},
		{"over the limit", in("big.yaml"), "over the 1048576-byte limit"},
		{"a directory", in("sub"), "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := disk.ReadFile(tc.path)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "SECRET")
		})
	}
	for _, p := range []string{in("sub/ok.yaml"), in("inside-link.yaml")} {
		b, err := disk.ReadFile(p)
		require.NoError(t, err, p)
		require.Equal(t, "a: 1\n", string(b))
	}
}

// Unconfined, devices and pipes still end at once with a clear error.
func TestSpecialFiles(t *testing.T) {
	for _, p := range []string{"/dev/zero", "/dev/urandom", "/dev/stdin", "/dev/null"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		start := time.Now()
		_, err := source.Disk{}.ReadFile(p)
		require.Error(t, err, p)
		require.Contains(t, err.Error(), "not a regular file", p)
		require.Less(t, time.Since(start), time.Second, p)
	}
}

// Inside judges a path lexically against the root: nothing is looked at.
func TestDiskInside(t *testing.T) {
	root := t.TempDir()
	d, err := source.Confine(root)
	require.NoError(t, err)
	for p, want := range map[string]bool{
		root: true, root + "/a/b": true, root + "/a/../..": false, "/": false, "/etc": false, root + "x": false,
	} {
		require.Equal(t, want, d.Inside(p), p)
	}
	require.True(t, source.Disk{}.Inside("/etc"), "an unconfined Disk holds every path")
}
