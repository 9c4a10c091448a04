package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCopyDir(t *testing.T) {
	from, to := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(filepath.Join(from, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(from, "a", "b", "f.yaml"), []byte("x: 1\n"), 0o600))
	CopyDir(t, from, to)
	require.Equal(t, "x: 1\n", ReadFile(t, filepath.Join(to, "a", "b", "f.yaml")))
}

func TestModfile(t *testing.T) {
	require.Equal(t, modulePath, modfile([]byte("// c\nmodule "+modulePath+"\n\ngo 1.26\n")))
	require.Empty(t, modfile([]byte("go 1.26\n")))
	require.Equal(t, filepath.Join(RepoRoot(t), "recipes"), Recipes(t))
}
