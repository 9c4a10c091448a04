// Package pipeline is the one path every entry point takes: load → resolve →
// check → build → emit. The CLI, the KRM function, the chart generator and
// render-all are thin adapters over Render.
package pipeline

import (
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/podconfig"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Request is one run to render.
type Request struct {
	// Recipe is the recipe file; Profile the infra file ("" when the recipe
	// carries an `infra:` mapping).
	Recipe  string
	Profile string
	// RecipeRoot is the local recipe root (--recipe-root); "" finds the
	// repository's recipes/ folder (podconfig.Of).
	RecipeRoot string
	// Checkout is the NeMo-RL checkout the CLI runs in, when it holds the
	// recipe (podconfig.Checkout); nil elsewhere.
	Checkout *podconfig.Checkout
	// UserDefaults is an optional user defaults layer for the profile.
	UserDefaults string
	// Run are the run's own parameters (mode, run id, user, name, labels,
	// annotations, image, which objects): see runparams.Run. User must be
	// normalised.
	runparams.Run
	// Namespace overrides the profile's.
	Namespace string
	// ParamNames spells Namespace, RunID and Name as the entry point's
	// user wrote them, for error messages (default: the CLI's flags).
	ParamNames ParamNames
	// Overrides are Hydra overrides: `infra.`-prefixed ones change the
	// profile, the rest change the recipe and are appended to the training
	// driver call.
	Overrides []string
	// Env answers ${oc.env:...}; nil means an empty environment.
	Env func(string) (string, bool)
	// UploadSize measures the working dir nrl-k8s would upload; nil skips
	// the 100 MiB check (the KRM function cannot read a checkout).
	UploadSize check.UploadSizer
}

// Result is everything a render found and made.
type Result struct {
	// Mode is the request's mode (what the summary describes).
	Mode    runparams.Mode
	Recipe  *effective.Recipe
	Profile *profile.Loaded
	Docs    []rendered.Doc
	Diags   diag.List
}

// SplitOverrides separates `infra.` overrides (prefix removed) from recipe
// overrides (docs/nrl-k8s.md §2.2).
func SplitOverrides(all []string) (infra, rec []string) {
	for _, o := range all {
		body := strings.TrimLeft(o, "+~")
		if body == "infra" || strings.HasPrefix(body, "infra.") || strings.HasPrefix(body, "infra=") {
			prefix := o[:len(o)-len(body)]
			infra = append(infra, prefix+strings.TrimPrefix(strings.TrimPrefix(body, "infra"), "."))
			continue
		}
		rec = append(rec, o)
	}
	return infra, rec
}

// Render renders one request: load, resolve, check the inputs, build,
// check the objects, emit, check the documents. A nil Docs with errors in
// Diags means nothing should be written.
func Render(l *recipe.Loader, req Request) *Result {
	res := &Result{Mode: req.Mode}
	l.StartRun()
	infraOv, recipeOv := SplitOverrides(req.Overrides)
	runOv, ds := requestDiags(l, req, infraOv, recipeOv)
	if res.Diags = ds; res.Diags.HasErrors() {
		// A bad run parameter is reported where it was written; the objects
		// it would break would only repeat it.
		return res
	}
	rec, recipeInfra, ds := loadRecipe(l, req.Recipe)
	if res.Diags = append(res.Diags, ds...); rec == nil {
		return res
	}
	prof, ds := profile.Load(profile.Input{
		Loader: l, UserDefaults: req.UserDefaults, File: req.Profile,
		RecipeInfra: recipeInfra, RecipeFile: req.Recipe,
		Overrides: infraOv, User: req.User, RunName: req.Name, Namespace: req.Namespace, Env: req.Env,
	})
	res.Diags = append(res.Diags, ds...)
	if prof == nil || ds.HasErrors() {
		return res
	}
	res.Profile = prof
	params := runparams.Params{Run: req.Run}
	runRecipe, cds := effective.Resolve(effective.Input{
		Loader: l, Recipe: rec, File: req.Recipe, Profile: prof, Overrides: runOv,
		Env: effective.Env{User: req.User, Env: req.Env},
	})
	res.Recipe = runRecipe
	res.Diags = append(res.Diags, prof.Locate(cds)...)
	res.Diags = append(res.Diags, resolvePod(req, rec, prof, runRecipe.Entrypoint, &params)...)
	res.Diags = append(res.Diags, prof.Locate(check.Inputs(check.Input{
		Profile: prof, Recipe: runRecipe, Params: params, UploadSize: req.UploadSize,
	}))...)
	if res.Diags.HasErrors() {
		return res
	}
	objs, bds := manifest.Build(manifest.Input{
		Infra: prof.Infra, File: prof.File, Params: params, Entrypoint: runRecipe.Entrypoint, Overrides: runOv,
	})
	res.Diags = append(res.Diags, prof.Locate(bds)...)
	if res.Diags.HasErrors() {
		return res
	}
	res.Diags = append(res.Diags, prof.Locate(check.StateMetadata(prof.File, prof.Tree, stateField(req), objs))...)
	if res.Diags = append(res.Diags, check.Objects(prof.File, prof.Infra, objs)...); res.Diags.HasErrors() {
		return res
	}
	if len(objs) == 0 {
		// An empty render would "succeed" with nothing to apply: a
		// truncated profile must not look like a run.
		res.Diags.Errorf(prof.File, "kuberay", "the profile renders no object in %s mode; expected a Ray cluster (kuberay.training) or deployments", req.Mode)
		return res
	}
	if req.State == runparams.Stopped {
		var notes []string
		objs, notes = manifest.Stop(objs)
		res.Diags.Infof("", stateField(req), "stopped: the run is rendered so that nothing starts it, and a sync that re-applies or re-creates it never does: %s", strings.Join(notes, "; "))
	}
	docs, err := emit.Convert(objs)
	if err != nil {
		res.Diags.Errorf(prof.File, "", "%v", err)
		return res
	}
	if res.Diags = append(res.Diags, check.Documents(prof.File, prof.Infra, docs)...); res.Diags.HasErrors() {
		return res
	}
	res.Docs = docs
	return res
}

// stateField is how the request's entry point spells the run's state.
func stateField(req Request) string {
	if req.ParamNames.State != "" {
		return req.ParamNames.State
	}
	return CLIParams.State
}

// requestDiags judges the request before any file is read: the overrides
// charged against the run's node budget (each is parsed as YAML, so one can
// hold an alias bomb just under the per-document bound, and many would add
// up; counted first, so a run over the budget stops before parsing them
// again), the run parameters, then each override's grammar. It returns the
// recipe overrides parsed: the one parse every later stage reads.
func requestDiags(l *recipe.Loader, req Request, infraOv, recipeOv []string) ([]hydra.Override, diag.List) {
	var ds diag.List
	for _, o := range req.Overrides {
		_, v, _ := strings.Cut(o, "=")
		if _, n, err := tree.ParseCount("override", []byte(v)); err == nil || n > 0 {
			if err := l.ChargeNodes("", o, n); err != nil {
				return nil, diag.FromError(err, "")
			}
		}
	}
	validateParams(req, &ds)
	if ds.HasErrors() {
		return nil, ds
	}
	for _, o := range infraOv {
		if strings.HasPrefix(o, "+") || strings.HasPrefix(o, "~") {
			ds.Errorf("", o, "infra overrides take no +/~ prefix (a plain dotlist merge, as in nrl-k8s); expected infra.KEY=VALUE")
		}
	}
	parsed := make([]hydra.Override, 0, len(recipeOv))
	for _, o := range recipeOv {
		p, err := hydra.Parse(o)
		if err != nil {
			ds.Errorf("", o, "%v", err)
			continue
		}
		parsed = append(parsed, p)
	}
	return parsed, ds
}

// loadRecipe loads the recipe with its defaults: chain and takes out its
// own `infra:` mapping, which is a profile layer.
func loadRecipe(l *recipe.Loader, file string) (*recipe.Loaded, *tree.Map, diag.List) {
	var ds diag.List
	rec, err := l.Load(file)
	if err != nil {
		return nil, nil, diag.FromError(err, file)
	}
	v, ok := rec.Tree.Get("infra")
	if !ok {
		return rec, nil, nil
	}
	m, isMap := v.(*tree.Map)
	if !isMap {
		ds.Errorf(file, "infra", "recipe `infra:` key must be a mapping; found %s", tree.AKind(v))
		return nil, nil, ds
	}
	rec.Tree.Delete("infra")
	return rec, m, nil
}

// resolvePod resolves what the pod runs into params: the --config every
// driver call carries, and under launch.recipeSource=configMap the merged
// recipe the run ships. The dev pod runs no driver.
func resolvePod(req Request, rec *recipe.Loaded, prof *profile.Loaded, ep *entrypoint.Script, params *runparams.Params) diag.List {
	if req.Mode == runparams.Dev {
		return nil
	}
	var ds diag.List
	config, pds := podconfig.Of(podconfig.Input{Profile: prof, RecipeFile: req.Recipe, RecipeRoot: req.RecipeRoot, Entrypoint: ep, Checkout: req.Checkout})
	params.Config = config
	ds = append(ds, prof.Locate(pds)...)
	if prof.Infra.Launch.RecipeSource == profile.RecipeSourceConfigMap {
		y, err := manifest.RecipeYAML(rec.Tree)
		if err != nil {
			ds.Errorf(req.Recipe, "", "launch.recipeSource=configMap: %v", err)
		}
		params.RecipeYAML = y
	}
	return ds
}
