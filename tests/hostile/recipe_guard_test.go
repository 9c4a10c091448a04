package hostile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A run that ships its recipe (launch.recipeSource: configMap) read it once,
// at start: an edit of the recipe file, which changes nothing but the
// ConfigMap's data, is an edit of the started run. The ConfigMap is named
// by its text, so the RayJob's head volume changes with it and the gate
// refuses it as it refuses an entrypoint edit; stopping the run in the same
// change lets it through.
func TestGateRefusesRecipeEditsOfStartedRuns(t *testing.T) {
	w := newWorld(t)
	shipped := "  overrides: [infra.launch.recipeSource=configMap]\n"
	w.file("runs/good/run.yaml", runYAML("good", shipped))
	w.openPR(t, "base")
	before := string(w.committed("main", "manifests/good.yaml"))
	require.Contains(t, before, "immutable: true", "the recipe ConfigMap never changes in place")

	w.file("configs/r.yaml", recipeYAML+"grpo: {max_num_steps: 7}\n")
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "edit the recipe of a started run")
	after := string(w.committed("pr", "manifests/good.yaml"))
	require.NotEqual(t, recipeConfigMapName(t, before), recipeConfigMapName(t, after), "a changed recipe is a new ConfigMap")

	r := w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "good: refused: the run has started")
	require.Contains(t, r.stderr, "RayJob/default/good: spec.rayClusterSpec")

	w.file("runs/good/run.yaml", runYAML("good", stoppedRun+shipped))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "stop it")
	r = w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 0, r.code, r.stderr)
}

// recipeConfigMapName is the name of the run's recipe ConfigMap in a
// rendered manifest.
func recipeConfigMapName(t *testing.T, manifest string) string {
	t.Helper()
	for _, line := range strings.Split(manifest, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "name: good-recipe-"); ok {
			return name
		}
	}
	require.Fail(t, "no recipe ConfigMap", manifest)
	return ""
}
