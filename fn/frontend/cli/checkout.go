package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/podconfig"
)

// findCheckout is the NeMo-RL checkout the command runs in: the nearest
// ancestor of the working directory (itself included) holding
// examples/configs/, when it holds the recipe too. nrl-k8s's users run it
// from their checkout, where a recipe's path below the checkout is its path
// in the pod's. Only the CLI looks (the KRM function and render-all read
// nothing but their inputs), and not under --root, which confines reads to
// the root: the caller skips it then.
func findCheckout(recipe string) *podconfig.Checkout {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	abs, err := filepath.Abs(filepath.FromSlash(recipe))
	if err != nil {
		return nil
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(filepath.Join(dir, "examples", "configs")); err == nil && fi.IsDir() {
			rel, err := filepath.Rel(dir, abs)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil // the recipe lies outside the checkout
			}
			return &podconfig.Checkout{Dir: filepath.ToSlash(dir), Recipe: filepath.ToSlash(rel)}
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}
