package renderall_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
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
			strays, err := renderall.Strays(source.Disk{}, out, &renderall.Result{}, nil, false)
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
