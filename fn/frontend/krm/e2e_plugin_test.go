package krm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// kustomizePluginBuild is `kustomize build --enable-alpha-plugins` (no
// --enable-exec: a plugin is not a KRM function) with the plugin home.
// TMPDIR is the test's: kustomize writes each plugin's config to a
// kust-plugin-config-* file there and leaves it behind when the plugin
// fails.
func kustomizePluginBuild(t *testing.T, home, dir string) ([]byte, string, error) {
	t.Helper()
	return kustomizeCLI(t, []string{"KUSTOMIZE_PLUGIN_HOME=" + home, "TMPDIR=" + t.TempDir()}, "build", "--enable-alpha-plugins", "--load-restrictor", "LoadRestrictionsNone", dir)
}

// TestKustomizeCLIPlugin: generator mode as a kustomize exec plugin
// (examples/kustomize-plugin, `nrl-k8s kustomize-plugin`) builds the same
// bytes as the KRM-function generator of the same runs
// (examples/kustomize-generator), and a warning fails it.
func TestKustomizeCLIPlugin(t *testing.T) {
	dir := exampleTree(t, "kustomize-plugin")
	root := filepath.Dir(filepath.Dir(dir))
	copyDir(t, filepath.Join(repoRoot, "examples", "kustomize-generator"), filepath.Join(root, "examples", "kustomize-generator"))
	testenv.GitAdd(t, root)
	home := filepath.Join(t.TempDir(), "plugins")
	install := exec.Command(filepath.Join(root, "bin", "nrl-k8s"), "kustomize-plugin", "--plugin-home", home)
	out, err := install.CombinedOutput()
	require.NoError(t, err, "%s", out)
	link := filepath.Join(home, "nemo-rl.nvidia.com", "v1alpha1", "nemorlrungenerator", "NemoRLRunGenerator")
	require.Equal(t, link+"\n", string(out), "prints where kustomize will find it")
	target, err := os.Readlink(link)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "bin", "nrl-krm"), target, "the KRM function alone, beside nrl-k8s")

	got, stderr, err := kustomizePluginBuild(t, home, dir)
	require.NoError(t, err, stderr)
	want, stderr, err := kustomizeBuild(t, filepath.Join(root, "examples", "kustomize-generator"))
	require.NoError(t, err, stderr)
	require.Equal(t, string(want), string(got), "plugin and KRM-function generator agree byte for byte")
	require.Contains(t, string(got), "name: exp1-sweep-a-recipe")

	gen := filepath.Join(dir, "runs-generator.yaml")
	orig, err := os.ReadFile(gen)
	require.NoError(t, err)
	// kustomize shows a plugin's stderr when it fails: a warning fails the
	// build by default (the config's other rules: plugin_test.go).
	require.NoError(t, os.WriteFile(gen, []byte(strings.Replace(string(orig), "warnings: ignore\n", "", 1)), 0o644))
	_, stderr, err = kustomizePluginBuild(t, home, dir)
	require.Error(t, err)
	require.Contains(t, stderr, `failed on the findings above: kustomize shows a plugin's messages only when it fails`)
}

// TestKustomizeCLIPluginTeams: the layout docs/krm.md gives for many runs,
// one NemoRLRunGenerator per sub-kustomization with namespace, prefix and
// labels set once above them (examples/kustomize-plugin-teams), builds the
// same bytes as one generator of the same runs (examples/kustomize-plugin).
func TestKustomizeCLIPluginTeams(t *testing.T) {
	dir := exampleTree(t, "kustomize-plugin-teams")
	root := filepath.Dir(filepath.Dir(dir))
	for _, e := range []string{"kustomize-plugin", "kustomize-generator"} {
		copyDir(t, filepath.Join(repoRoot, "examples", e), filepath.Join(root, "examples", e))
	}
	testenv.GitAdd(t, root)
	home := filepath.Join(t.TempDir(), "plugins")
	out, err := exec.Command(filepath.Join(root, "bin", "nrl-k8s"), "kustomize-plugin", "--plugin-home", home).CombinedOutput()
	require.NoError(t, err, "%s", out)

	got, stderr, err := kustomizePluginBuild(t, home, dir)
	require.NoError(t, err, stderr)
	want, stderr, err := kustomizePluginBuild(t, home, filepath.Join(root, "examples", "kustomize-plugin"))
	require.NoError(t, err, stderr)
	require.Equal(t, string(want), string(got), "a generator per team and one generator agree byte for byte")
	require.Contains(t, string(got), "namespace: ml-prod")
	require.Contains(t, string(got), "cost-center: rl-42")
}
