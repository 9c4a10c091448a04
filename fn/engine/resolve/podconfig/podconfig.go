// Package podconfig resolves what the pod will run: the --config every
// NeMo-RL driver call of the entrypoint carries, so that the recipe that
// was checked is the one that runs. It reports, as diagnostics, a mapping
// it cannot make; judging the run is fn/engine/check's.
package podconfig

import (
	"path"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Input is what Of reads.
type Input struct {
	Profile *profile.Loaded
	// RecipeFile is the checked recipe, as the caller named it (slash path).
	RecipeFile string
	// RecipeRoot is the local recipe root (--recipe-root); "" finds it.
	RecipeRoot string
	// Entrypoint is the profile's entrypoint as the resolve stage read it
	// (effective.Recipe.Entrypoint); nil when the profile has none.
	Entrypoint *entrypoint.Script
	// Checkout is the NeMo-RL checkout the command runs in, when the
	// recipe lies inside it (nil otherwise, and always for the KRM
	// function, render-all and --root: they read nothing outside their
	// inputs).
	Checkout *Checkout
}

// Checkout is a local NeMo-RL checkout: the nearest ancestor of the
// working directory holding examples/configs/, as nrl-k8s's users run it
// ("from the NeMo-RL repo root"). A path below it is the path in the pod's
// checkout.
type Checkout struct {
	Dir    string // the checkout, for messages
	Recipe string // the checked recipe's path below Dir (slash path)
}

// Of ties the recipe that is checked to the recipe that runs: it
// maps the checked recipe into the pod and returns the --config value every
// driver call of the entrypoint must carry ("" when the entrypoint is left
// as it is). The mapping has a recipe root on each side:
//
//   - local, first that applies: --recipe-root; else the NeMo-RL checkout
//     the command runs in, when it holds the recipe; else the nearest
//     ancestor folder of the recipe that holds NeMo-RL's `examples/configs/`
//     tree (the repository's recipes/, a lab's NeMo-RL submodule: they
//     mirror NeMo-RL's layout, so the path below it is the path in
//     NeMo-RL's checkout);
//   - pod: launch.recipeRoot, else launch.codePath (codeSource image|lustre).
//
// A value is written relative to codePath when it lies below it and every
// call's --config was relative (the driver runs in codePath, as the shipped
// entrypoints `cd` there and as nrl-k8s assumes), else absolute.
func Of(in Input) (string, diag.List) {
	var ds diag.List
	f := in.Profile.File
	launch := in.Profile.Infra.Launch
	if in.Entrypoint == nil || len(in.Entrypoint.Calls) == 0 {
		return "", ds
	}
	script := *in.Entrypoint
	recipe := path.Clean(in.RecipeFile)
	if launch.RecipeSource == profile.RecipeSourceConfigMap {
		// The recipe ships with the run: no tree to map, every call reads it.
		return configTarget(&ds, f, script, recipe, profile.RecipeMountPath, true)
	}
	podRoot := ""
	switch {
	case launch.RecipeRoot != nil && *launch.RecipeRoot != "":
		podRoot = *launch.RecipeRoot
	case launch.CodeSource == "image" || launch.CodeSource == "lustre":
		if launch.CodePath != nil {
			podRoot = *launch.CodePath
		}
	}
	if podRoot == "" {
		// codeSource=upload: the rendered jobs upload nothing, so the driver
		// reads whatever its --config names in the image.
		for _, inv := range script.Calls {
			ds.Warnf(f, "launch.entrypoint", "line %d: codeSource is upload and the rendered job uploads nothing: the pod reads %s from the image's code, not the checked recipe %s; expected codeSource image|lustre with codePath, or launch.recipeRoot, so that --config is pointed at the checked recipe",
				inv.Line, readsWhat(inv), recipe)
		}
		return "", ds
	}
	rel, root, ok := localRel(recipe, in.RecipeRoot)
	if in.RecipeRoot == "" && in.Checkout != nil && in.Checkout.Recipe != "" {
		rel, root, ok = path.Clean(in.Checkout.Recipe), in.Checkout.Dir, true
	}
	if in.RecipeRoot != "" && !ok {
		ds.Errorf(f, "launch.entrypoint", "the checked recipe %s is not under the recipe root %s (--recipe-root); expected the recipe inside it, so that its path below the root is its path below launch.recipeRoot/codePath (%s) in the pod", recipe, root, podRoot)
		return "", ds
	}
	if !ok {
		// No recipe root: nothing to map with. Accept calls whose --config
		// already names this recipe; anything else cannot be reconciled.
		suffix := nearestRecipesRel(recipe)
		for _, inv := range script.Calls {
			c := path.Clean(inv.Config)
			if inv.Config == "" {
				ds.Errorf(f, "launch.entrypoint", "line %d: the driver call has no --config: the pod would train the driver's default config (examples/configs/<algorithm>.yaml in the image), not the checked recipe %s; expected --config naming the checked recipe on that line", inv.Line, recipe)
				continue
			}
			if c != suffix && !strings.HasSuffix(c, "/"+suffix) {
				ds.Errorf(f, "launch.entrypoint", "line %d: the pod reads --config %s but the checked recipe is %s, which is not under a recipe root (the NeMo-RL checkout the command runs in, a folder holding NeMo-RL's examples/configs/ tree, spec.recipeRoot or --recipe-root) and so cannot be mapped into the pod; expected --config naming the checked recipe, or the recipe inside a recipe root",
					inv.Line, inv.Config, recipe)
			}
		}
		return "", ds
	}
	target := path.Join(podRoot, rel)
	if launch.CodePath != nil {
		code := path.Clean(*launch.CodePath)
		allRelative := true
		for _, inv := range script.Calls {
			allRelative = allRelative && inv.Config != "" && !strings.HasPrefix(inv.Config, "/")
		}
		if r, under := below(target, code); under && allRelative {
			target = r
		}
	}
	return configTarget(&ds, f, script, recipe, target, false)
}

// configTarget points every driver call at target and says what changed.
func configTarget(ds *diag.List, f string, script entrypoint.Script, recipe, target string, shipped bool) (string, diag.List) {
	for _, inv := range script.Calls {
		if inv.Config == "" {
			ds.Errorf(f, "launch.entrypoint", "line %d: the driver call has no --config: the pod would train the driver's default config (examples/configs/<algorithm>.yaml in the image), not the checked recipe %s (%s in the pod); expected --config %s on that line", inv.Line, recipe, target, target)
		}
	}
	_, changes, err := script.RewriteConfig(target)
	if err != nil {
		ds.Errorf(f, "launch.entrypoint", "%v", err)
		return "", *ds
	}
	reported := map[entrypoint.ConfigRewrite]bool{}
	for _, c := range changes {
		// Two calls on one line rewriting the same path: one report, as
		// nrl-k8s logs one line per original path.
		if reported[c] {
			continue
		}
		reported[c] = true
		if shipped {
			ds.Infof(f, "launch.entrypoint", "line %d: --config %s rewritten to --config %s: launch.recipeSource is configMap, so the checked recipe %s ships with the run", c.Line, c.From, c.To, recipe)
			continue
		}
		ds.Warnf(f, "launch.entrypoint", "line %d: --config %s names another recipe than the checked one (%s); rewritten to --config %s so that the pod runs the checked recipe", c.Line, c.From, recipe, c.To)
	}
	return target, *ds
}

func readsWhat(inv entrypoint.Invocation) string {
	if inv.Config == "" {
		return "the driver's default config (no --config)"
	}
	return "--config " + inv.Config
}

// localRel is the recipe's path below its local recipe root.
func localRel(recipe, root string) (rel, usedRoot string, ok bool) {
	if root != "" {
		root = path.Clean(root)
		r, under := below(recipe, root)
		return r, root, under
	}
	// The nearest folder holding NeMo-RL's examples/configs/ tree is a
	// NeMo-RL checkout (the repository's recipes/, a lab's NeMo-RL
	// submodule under any name): the recipe's path below it is its path in
	// the image's checkout. Searched from the recipe up, so NeMo-RL's own
	// examples/configs/recipes/ folder is not taken for a root.
	segs := strings.Split(recipe, "/")
	for i := len(segs) - 3; i >= 0; i-- {
		if segs[i] == "examples" && segs[i+1] == "configs" {
			if i == 0 {
				return recipe, ".", true
			}
			return strings.Join(segs[i:], "/"), strings.Join(segs[:i], "/"), true
		}
	}
	return "", "", false
}

// nearestRecipesRel is the recipe's path below its nearest `recipes` folder,
// else its file name.
func nearestRecipesRel(recipe string) string {
	segs := strings.Split(recipe, "/")
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i] == "recipes" {
			return strings.Join(segs[i+1:], "/")
		}
	}
	return segs[len(segs)-1]
}

// below returns p relative to dir when p lies inside dir.
func below(p, dir string) (string, bool) {
	if dir == "." {
		if strings.HasPrefix(p, "../") || p == ".." || strings.HasPrefix(p, "/") {
			return "", false
		}
		return p, true
	}
	if strings.HasPrefix(p, dir+"/") {
		return strings.TrimPrefix(p, dir+"/"), true
	}
	if dir == "/" && strings.HasPrefix(p, "/") {
		return strings.TrimPrefix(p, "/"), true
	}
	return "", false
}
