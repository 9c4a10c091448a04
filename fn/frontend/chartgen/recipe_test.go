package chartgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// MergedRecipe is the recipe with its defaults: chain merged, as the
// engine ships it; with a root, nothing outside it is read.
func TestMergedRecipe(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"base.yaml":    "a: 1\nb: {c: 2, d: 3}\n",
		"r/run.yaml":   "defaults: ../base.yaml\nb: {d: 4}\ne: x\n",
		"r/up.yaml":    "defaults: ../../outside.yaml\n",
		"outside.yaml": "z: 1\n",
	} {
		p := filepath.Join(dir, "root", filepath.FromSlash(name))
		if name == "outside.yaml" {
			p = filepath.Join(dir, name)
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	root := filepath.Join(dir, "root")
	cases := []struct {
		name, root, file, want, err string
	}{
		{"the chain merged", root, filepath.Join(root, "r", "run.yaml"), "a: 1\nb:\n  c: 2\n  d: 4\ne: x\n", ""},
		{"no root: the disk", "", filepath.Join(root, "r", "up.yaml"), "z: 1\n", ""},
		{"a chain leaving the root", root, filepath.Join(root, "r", "up.yaml"), "", "outside.yaml"},
		{"no such file", root, filepath.Join(root, "r", "none.yaml"), "", "none.yaml"},
		{"no such root", filepath.Join(dir, "none"), "r/run.yaml", "", "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MergedRecipe(tc.root, tc.file)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
