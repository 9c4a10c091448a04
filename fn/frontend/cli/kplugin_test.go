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

// kustomize-plugin links nrl-krm when it is beside the binary, an
// executable regular file; otherwise the binary itself.
func TestPluginBinary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lean  func(t *testing.T, dir string)
		wantL bool
	}{
		{"nrl-krm beside", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, leanName), []byte("x"), 0o755))
		}, true},
		{"nothing beside", func(*testing.T, string) {}, false},
		{"not executable", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, leanName), []byte("x"), 0o644))
		}, false},
		{"a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, leanName), 0o755))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			self := filepath.Join(dir, "nrl-k8s")
			require.NoError(t, os.WriteFile(self, []byte("x"), 0o755))
			tc.lean(t, dir)
			want := self
			if tc.wantL {
				want = filepath.Join(dir, leanName)
			}
			require.Equal(t, want, pluginBinary(self))
		})
	}
}
