package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// TestKustomizePluginStderr holds the plugin's stderr contract: kustomize
// keeps an exec plugin's stderr only to print it when the plugin fails, so
// a successful build writes nothing there, and a failing one writes every
// finding (the example's runs have warnings: warnings: ignore builds, the
// default fails on them).
func TestKustomizePluginStderr(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "examples", "kustomize-plugin")
	t.Chdir(dir)
	cfg, err := os.ReadFile("runs-generator.yaml")
	require.NoError(t, err)
	require.Contains(t, string(cfg), "warnings: ignore")

	var out, errOut bytes.Buffer
	require.Equal(t, 0, KustomizePlugin([]string{"runs-generator.yaml"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "\nkind: RayJob\n")
	assert.Empty(t, errOut.String(), "a successful build writes nothing kustomize would drop")

	failing := filepath.Join(t.TempDir(), "gen.yaml")
	require.NoError(t, os.WriteFile(failing, []byte(strings.Replace(string(cfg), "warnings: ignore", "warnings: fail", 1)), 0o644))
	out.Reset()
	errOut.Reset()
	assert.Equal(t, ExitError, KustomizePlugin([]string{failing}, &out, &errOut))
	assert.Contains(t, errOut.String(), "[warning]")
	assert.Contains(t, errOut.String(), "failed on the findings above")
}
