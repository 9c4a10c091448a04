package source_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// The upload is measured as nrl-k8s stages it: caches, virtualenvs, git
// metadata and compiled Python are not uploaded, missing paths add nothing.
func TestUploadSize(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, make([]byte, n), 0o644))
	}
	write("nemo_rl/a.py", 100)
	write("nemo_rl/sub/b.yaml", 20)
	write("nemo_rl/__pycache__/a.cpython-312.pyc", 1000)
	write("nemo_rl/c.pyc", 1000)
	write("nemo_rl/x.egg-info/PKG-INFO", 1000)
	write(".venv/lib/big", 5000)
	write(".git/objects/big", 5000)
	write("examples/run_grpo.py", 3)
	n, err := source.UploadSize(root)([]string{"nemo_rl", "examples", ".venv", "missing"})
	require.NoError(t, err)
	require.EqualValues(t, 123, n)
}
