package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Exec returns the exit code and output, with stdin, from an environment
// of PATH and HOME only.
func TestExec(t *testing.T) {
	t.Setenv("NRL_K8S_NAMESPACE", "from-the-developer")
	dir := t.TempDir()
	code, out, errOut := Exec(t, "sh", dir, "/home/u", []byte("in"), "-c", `cat; echo "$HOME $NRL_K8S_NAMESPACE $(pwd)"; echo e >&2; exit 3`)
	require.Equal(t, 3, code)
	require.Equal(t, "in/home/u  "+dir+"\n", out)
	require.Equal(t, "e\n", errOut)
}

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
