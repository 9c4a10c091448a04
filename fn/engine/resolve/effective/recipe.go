// Package effective is the resolve stage for recipes: the recipe the
// training driver will see, its `defaults:` chain merged, then the Hydra
// overrides the entrypoint passes to run_*.py, then the run's overrides,
// with interpolations resolved the way the pod resolves them. The check
// stage reads it; it checks nothing itself beyond what resolving needs.
package effective

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Env is what recipe interpolation may read.
type Env struct {
	User string
	Env  func(string) (string, bool)
}

// Recipe is the effective recipe: the `defaults:` chain, then the Hydra
// overrides the entrypoint passes to run_*.py, then the run's overrides.
type Recipe struct {
	File string
	// Files is the defaults chain, base first.
	Files []string
	// Tree is the merged recipe with overrides applied, unresolved.
	Tree *tree.Map
	// Resolved is Tree with interpolations resolved (nil if that failed).
	Resolved *tree.Map
	// Entrypoint is the profile's entrypoint, read once for the whole
	// render (nil when the profile has none).
	Entrypoint *entrypoint.Script
	// Invocation is the driver call found in the entrypoint, if any.
	Invocation *entrypoint.Invocation
	// Overrides are all overrides applied, in order, with where they came from.
	Overrides []AppliedOverride
	loader    *recipe.Loader
}

// AppliedOverride is an override and its origin.
type AppliedOverride struct {
	Override hydra.Override
	Origin   string // "entrypoint" or "run"
}

// Input is what resolving a recipe reads.
type Input struct {
	Loader  *recipe.Loader
	Recipe  *recipe.Loaded
	File    string // the recipe file, as the request names it
	Profile *profile.Loaded
	// Overrides are the run's recipe overrides, parsed once by the pipeline.
	Overrides []hydra.Override
	Env       Env
}

// Resolve builds the recipe the training driver will see.
func Resolve(in Input) (*Recipe, diag.List) {
	l, rec, file, prof, env := in.Loader, in.Recipe, in.File, in.Profile, in.Env
	var ds diag.List
	r := &Recipe{File: file, Files: rec.Files, Tree: tree.Copy(rec.Tree).(*tree.Map), loader: l}
	if ep := prof.Infra.Launch.Entrypoint; ep != nil {
		script := entrypoint.Parse(*ep)
		r.Entrypoint = &script
		if inv, ok := script.First(); ok {
			r.Invocation = &inv
			for _, raw := range inv.Overrides {
				o, err := hydra.Parse(raw)
				if err != nil {
					ds.Errorf(prof.File, "launch.entrypoint", "line %d: %v", inv.Line, err)
					continue
				}
				r.apply(&ds, prof.File, "launch.entrypoint", o, "entrypoint")
			}
		}
	}
	for _, o := range in.Overrides {
		r.apply(&ds, file, o.Key.String(), o, "run")
	}
	resolved, err := interp.New(r.Tree, interp.Options{
		User: env.User, Env: env.Env,
		// The recipe is resolved again in the pod, where ${oc.env:...} reads
		// the pod's environment: an unset variable here is not an error.
		Resolvers: map[string]interp.Func{"oc.env": podEnvResolver(env.Env)},
	}).Value(nil)
	if err != nil {
		if ie, ok := errors.AsType[*interp.Error](err); ok {
			ds.Errorf(r.fileOf(tree.ParsePath(ie.Path)), ie.Path, "cannot resolve %q: %s", ie.Value, ie.Msg)
		} else {
			ds.Errorf(file, "", "%v", err)
		}
	} else {
		r.Resolved = resolved.(*tree.Map)
	}
	return r, ds
}

func (r *Recipe) apply(ds *diag.List, file, field string, o hydra.Override, origin string) {
	if s, ok := o.Value.(string); ok && o.Dynamic {
		// The pod's shell expands ${VAR} before Hydra reads it: to us the
		// value is text, not an OmegaConf interpolation.
		o.Value = strings.ReplaceAll(s, "${", `\${`)
	}
	if err := hydra.Apply(r.Tree, o); err != nil {
		ds.Errorf(file, field, "%v", err)
		return
	}
	r.Overrides = append(r.Overrides, AppliedOverride{Override: o, Origin: origin})
}

// podEnvResolver reads the render's environment and, for a variable that is
// not set, keeps the interpolation for the pod to resolve.
func podEnvResolver(env func(string) (string, bool)) interp.Func {
	return func(args []any) (any, error) {
		if len(args) < 1 || len(args) > 2 {
			return nil, fmt.Errorf("takes a variable name and an optional default")
		}
		name, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("variable name must be a string")
		}
		if env != nil {
			if v, ok := env(name); ok {
				return v, nil
			}
		}
		if len(args) == 2 {
			if args[1] == nil {
				return nil, nil
			}
			return interp.ToString(args[1])
		}
		return "${oc.env:" + name + "}", nil
	}
}

// Value returns the resolved value at a dotted path, and whether a dynamic
// (pod-side shell) override set it.
func (r *Recipe) Value(path string) (v any, ok bool, dynamic bool) {
	p := tree.ParsePath(path)
	for i := len(r.Overrides) - 1; i >= 0; i-- {
		if r.Overrides[i].Override.Key.String() == p.String() {
			if r.Overrides[i].Override.Dynamic {
				return nil, false, true
			}
			break
		}
	}
	if r.Resolved == nil {
		v, ok = tree.Lookup(r.Tree, p)
		return v, ok, false
	}
	v, ok = tree.Lookup(r.Resolved, p)
	return v, ok, false
}

// Origin says where the value at path was set: the last override that set
// it, else the last file of the chain that holds it.
func (r *Recipe) Origin(path string) string {
	p := tree.ParsePath(path)
	for i := len(r.Overrides) - 1; i >= 0; i-- {
		o := r.Overrides[i]
		if o.Override.Key.String() == p.String() {
			if o.Origin == "entrypoint" {
				return fmt.Sprintf("entrypoint override %q", o.Override.Raw)
			}
			return fmt.Sprintf("run override %q", o.Override.Raw)
		}
	}
	return r.fileOf(p)
}

func (r *Recipe) fileOf(p tree.Path) string {
	if r.loader == nil {
		return r.File
	}
	for i := len(r.Files) - 1; i >= 0; i-- {
		if ok, err := r.loader.Holds(r.Files[i], p); err == nil && ok {
			return r.Files[i]
		}
	}
	return r.File
}

// OriginFile is the file of the `defaults:` chain that set the value at
// path, "" when an override set it (Origin then says which).
func (r *Recipe) OriginFile(path string) string {
	p := tree.ParsePath(path)
	for _, o := range r.Overrides {
		if o.Override.Key.String() == p.String() {
			return ""
		}
	}
	return r.fileOf(p)
}
