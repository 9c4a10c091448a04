package chartgen

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
)

// MergedRecipe is manifest.RecipeYAML of the recipe file with its
// defaults: chain merged, read from the disk (inside root when root is not
// ""): what a run with launch.recipeSource: configMap ships, and the Helm
// chart's recipe value takes (`nrl-k8s recipe-merge`).
func MergedRecipe(root, file string) (string, error) {
	disk := source.Disk{}
	if root != "" {
		var err error
		if disk, err = source.Confine(root); err != nil {
			return "", err
		}
	}
	rec, err := recipe.NewLoader(disk).Load(file)
	if err != nil {
		return "", err
	}
	y, err := manifest.RecipeYAML(rec.Tree)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return y, nil
}
