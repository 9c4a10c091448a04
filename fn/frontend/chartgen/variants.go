package chartgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// shippedRecipe is the recipe text a render ships in its ConfigMap
// (launch.recipeSource=configMap), "" when it ships none.
func shippedRecipe(docs []rendered.Doc) string {
	for _, d := range docs {
		if d.Kind != "ConfigMap" {
			continue
		}
		if data, ok := d.Data["data"].(map[string]any); ok {
			if text, ok := data[path.Base(profile.RecipeMountPath)].(string); ok {
				return text
			}
		}
	}
	return ""
}

// recipeSentinel replaces the shipped recipe's text with SentinelRecipe in
// the rendered data of a recipe variant.
func recipeSentinel(res *pipeline.Result, data string) (string, error) {
	text := shippedRecipe(res.Docs)
	if text == "" {
		return "", fmt.Errorf("%s renders no recipe ConfigMap", RecipeVariant)
	}
	if n := strings.Count(data, jsonString(text)); n != 1 {
		return "", fmt.Errorf("the shipped recipe's text occurs %d times in the render; expected once, in its ConfigMap", n)
	}
	data = strings.Replace(data, jsonString(text), jsonString(SentinelRecipe), 1)
	// The ConfigMap's name and the head's volume name it by its text.
	hash := manifest.RecipeHash(text)
	if n := strings.Count(data, hash); n != 2 {
		return "", fmt.Errorf("the shipped recipe's hash %s occurs %d times in the render; expected twice, in its ConfigMap's name and the head's volume", hash, n)
	}
	return strings.ReplaceAll(data, hash, SentinelRecipeHash), nil
}

// canonical is a JSON document re-encoded with sorted keys, as the chart's
// fromJsonArray and toYaml see it; "" when it is not JSON (never equal).
func canonical(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func (g *gen) profile(e Entry) (*ProfileMeta, error) {
	pm := &ProfileMeta{
		Description: e.Description, Profile: e.Profile, Recipe: e.Recipe,
		MaxUserLength: map[string]int{}, Renders: map[string]*RenderMeta{}, ModesRefused: map[string]string{},
		EntrypointCluster: map[string]int64{}, RecipeCluster: map[string]int64{},
	}
	var rayjobKnobs *knobInfo
	if g.indexDir != "" {
		pm.Profile, pm.Recipe = e.InIndex.Profile, e.InIndex.Recipe
	}
	hasServices := false
	for _, mode := range Modes {
		if mode != runparams.RayJob {
			if _, _, err := g.run(e, mode, sentinelValues(""), g.env); err != nil {
				// The profile cannot render this mode (a recipe shipped in a
				// ConfigMap is rayjob mode only): the chart packages the
				// modes it can and refuses this one with the engine's reason.
				pm.ModesRefused[string(mode)] = err.Error()
				continue
			}
		}
		pm.Modes = append(pm.Modes, string(mode))
		ki, err := g.knobs(e, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		if mode == runparams.RayJob {
			rayjobKnobs = ki
			pm.Defaults = ki.defaults
		}
		var plainFile, plainData string
		for _, withRunID := range []bool{false, true} {
			key := string(mode)
			sent := sentinelValues("")
			sent.Knobs = sentinelKnobs().only(ki.avail)
			if withRunID {
				key += ".runid"
				sent.RunID = SentinelRunID
			}
			v, err := g.variant(e, mode, sent, ki)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			rm, data, res := v.meta, v.data, v.res
			rm.File = path.Join(RenderedDir, e.Name+"."+key+".json")
			if withRunID && data == plainData {
				// The run id changes nothing in this mode (the dev pod): share
				// the file rather than ship a copy.
				rm.File = plainFile
			} else {
				g.out[rm.File] = []byte(data)
			}
			if !withRunID {
				plainFile, plainData = rm.File, data
				pm.MaxUserLength[string(mode)] = maxUser(rm.Names)
				if mode == runparams.RayJob {
					if err := g.clusterFacts(e, res, pm); err != nil {
						return nil, err
					}
					hasServices = len(res.Profile.Infra.Deployments) > 0
				}
			}
			pm.Renders[key] = rm
		}
	}
	if err := g.recipeVariants(e, pm, rayjobKnobs); err != nil {
		return nil, err
	}
	if hasServices {
		if err := g.servicesVariant(e, pm); err != nil {
			return nil, err
		}
	}
	return pm, nil
}

// servicesVariant renders the profile's shared services alone, for the
// chart's mode=services. Their image is the `image` value's when the
// engine accepts one for them (their containers run one image); otherwise
// the data keeps the profile's images and the chart refuses an image value.
func (g *gen) servicesVariant(e Entry, pm *ProfileMeta) error {
	sent := sentinelValues("")
	sent.services = true
	if _, _, err := g.run(e, runparams.RayJob, sent, g.env); err != nil {
		sent.Image = ""
	}
	// The per-run values are a run's: a services release refuses them.
	ki := &knobInfo{avail: map[string]bool{}, unavail: map[string]string{}}
	for _, n := range KnobNames {
		ki.unavail[n] = "mode services installs the profile's shared services, not a run; set it on the run releases"
	}
	v, err := g.variant(e, runparams.RayJob, sent, ki)
	if err != nil {
		return fmt.Errorf("%s: %w", ServicesMode, err)
	}
	rm, data, res := v.meta, v.data, v.res
	rm.File = path.Join(RenderedDir, e.Name+"."+ServicesMode+".json")
	g.out[rm.File] = []byte(data)
	pm.Renders[ServicesMode] = rm
	pm.MaxUserLength[ServicesMode] = maxUser(rm.Names)
	pm.Modes = append(pm.Modes, ServicesMode)
	for _, d := range res.Docs {
		pm.Services = append(pm.Services, ObjectRef{Kind: d.Kind, Name: d.Name})
	}
	return nil
}

// recipeVariants renders the data for a run with a `recipe` value: rayjob
// mode under RecipeVariant, with and without a run id. A profile the engine
// refuses that for (a head volume named like the recipe's, no entrypoint)
// is recorded as unable to ship one, and the chart says so.
func (g *gen) recipeVariants(e Entry, pm *ProfileMeta, ki *knobInfo) error {
	try := sentinelValues("")
	try.infra = []string{RecipeVariant}
	if _, _, err := g.run(e, runparams.RayJob, try, g.env); err != nil {
		pm.NoRecipeValue = err.Error()
		return nil
	}
	for _, runID := range []string{"", SentinelRunID} {
		key := string(runparams.RayJob) + ".recipe"
		if runID != "" {
			key += ".runid"
		}
		sent := sentinelValues(runID)
		sent.infra = []string{RecipeVariant}
		sent.Knobs = sentinelKnobs().only(ki.avail)
		v, err := g.variant(e, runparams.RayJob, sent, ki)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		rm, data := v.meta, v.data
		rm.File = path.Join(RenderedDir, e.Name+"."+key+".json")
		g.out[rm.File] = []byte(data)
		pm.Renders[key] = rm
	}
	return nil
}

// probeRecipe writes a recipe whose `defaults:` chain is e's recipe and
// which adds a key JSON must escape: the probe render of a recipe variant
// ships it, so its output must be the sentinel output with only the
// recipe text replaced.
func probeRecipe(e Entry) (file string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "nrl-chartgen-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	abs, err := filepath.Abs(filepath.FromSlash(e.Recipe))
	if err != nil {
		cleanup()
		return "", nil, err
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	file = filepath.ToSlash(filepath.Join(dir, "probe.yaml"))
	text := fmt.Sprintf("defaults: %s\nnrl_probe_recipe:\n  text: 'x \"y\" <&>'\n", jsonString(filepath.ToSlash(rel)))
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	return file, cleanup, nil
}

// variant renders one mode / run-id variant and proves it substitutable.
func (g *gen) variant(e Entry, mode runparams.Mode, sent Values, ki *knobInfo) (variantRender, error) {
	withOv := sent
	withOv.Overrides = []string{SentinelOverride}
	res, data, err := g.run(e, mode, withOv, g.env)
	if err != nil {
		return variantRender{}, err
	}
	if len(res.Docs) > g.maxDocs {
		g.maxDocs = len(res.Docs)
	}
	plainRes, plain, err := g.run(e, mode, sent, g.env)
	if err != nil {
		return variantRender{}, err
	}
	shipsRecipe := len(sent.infra) > 0
	if shipsRecipe {
		if data, err = recipeSentinel(res, data); err != nil {
			return variantRender{}, err
		}
		if plain, err = recipeSentinel(plainRes, plain); err != nil {
			return variantRender{}, err
		}
	}
	rm := &RenderMeta{Names: []NameRule{}, Warnings: []string{}, Unavailable: ki.unavail}
	if rm.OverridesToken, err = overridesToken(data, plain); err != nil {
		return variantRender{}, err
	}
	rm.Image = variantImage(res, mode, sent)
	rm.KubeVersion = kubeVersion(res.Docs)
	if rm.Stopped, err = g.stopPlan(e, mode, sent, ki); err != nil {
		return variantRender{}, err
	}
	if err := g.proveSubstitution(e, mode, sent, ki, rm, data, res); err != nil {
		return variantRender{}, err
	}
	if err := g.proveNoEnvironment(e, mode, withOv, shipsRecipe, data); err != nil {
		return variantRender{}, err
	}
	rm.Names = append(rm.Names, sentinelNames(res.Docs, shipsRecipe)...)
	rm.Warnings = append(rm.Warnings, g.warnings(e, res)...)
	rm.Taken = taken(res.Docs)
	return variantRender{meta: rm, data: data, res: res}, nil
}

// variantRender is one render of a profile's mode with the sentinels: what
// the chart records about it, its data as the chart carries it, and the
// engine's result it came from.
type variantRender struct {
	meta *RenderMeta
	data string
	res  *pipeline.Result
}

// overridesToken is the exact text the sentinel override's insertion added
// to data ("" when the entrypoint does not show run overrides): removing it
// must give the render without overrides.
func overridesToken(data, plain string) (string, error) {
	switch n := strings.Count(data, SentinelOverride); n {
	case 0:
		if data != plain {
			return "", fmt.Errorf("run overrides change the output although the entrypoint does not show them")
		}
		return "", nil
	case 1:
		token := ""
		for _, cand := range []string{" " + SentinelOverride, SentinelOverride + " "} {
			if strings.Contains(data, cand) && strings.Replace(data, cand, "", 1) == plain {
				token = cand
			}
		}
		if token == "" {
			return "", fmt.Errorf("removing the inserted override %q does not give the render without overrides: entrypoint.Script.AppendOverrides no longer inserts plain text", SentinelOverride)
		}
		return token, nil
	default:
		return "", fmt.Errorf("the sentinel override appears %d times; expected once, in the entrypoint", n)
	}
}

// variantImage is the image the chart's image value replaces in a render.
func variantImage(res *pipeline.Result, mode runparams.Mode, sent Values) string {
	switch {
	case sent.services && sent.Image == "":
		return "" // the profile's images stay; the chart takes no image value
	case sent.services:
		return manifest.DeploymentImages(res.Profile.Infra)[0]
	case mode == runparams.Dev:
		return manifest.DevImage(res.Profile.Infra)
	}
	return res.Profile.Infra.Image
}

// proveSubstitution checks the chart's whole premise, on every generation:
// the engine's output for other values is this output with the strings
// replaced, with and without the optional values. A recipe variant's probe
// ships another recipe (with a defaults: chain): the objects depend on the
// recipe only through the shipped text (manifest.Build sees the recipe as
// runparams.Params.RecipeYAML and Config, the fixed mount path).
func (g *gen) proveSubstitution(e Entry, mode runparams.Mode, sent Values, ki *knobInfo, rm *RenderMeta, data string, res *pipeline.Result) error {
	shipsRecipe := len(sent.infra) > 0
	probeEntry := e
	if shipsRecipe {
		file, cleanup, err := probeRecipe(e)
		if err != nil {
			return err
		}
		defer cleanup()
		probeEntry.Recipe = file
	}
	full := probe
	full.infra, full.services = sent.infra, sent.services
	if sent.Image == "" {
		full.Image = ""
	}
	full.Knobs = probeKnobs().only(ki.avail)
	if sent.RunID == "" {
		full.RunID = ""
	}
	bare := full
	bare.Image, bare.Labels, bare.Annotations, bare.Knobs = "", nil, nil, Knobs{}
	other := bare
	other.Knobs = knobProbe2().only(ki.avail)
	for _, pv := range []Values{full, bare, other} {
		pres, got, err := g.run(probeEntry, mode, pv, g.env)
		if err != nil {
			return fmt.Errorf("probe render: %w", err)
		}
		if shipsRecipe {
			pv.Recipe = shippedRecipe(pres.Docs)
			if pv.Recipe == shippedRecipe(res.Docs) {
				return fmt.Errorf("the probe recipe ships the same text as %s", e.Recipe)
			}
		}
		// Compared as the chart reads them (fromJsonArray): inserted label
		// and annotation pairs are not in sorted place in the text.
		want := Substitute(data, rm, ki.defaults, pv)
		if canonical(got) != canonical(want) {
			return fmt.Errorf("the engine's output for %+v is not the sentinel output with those values substituted: a rule depends on more than their text, so the chart cannot carry it", pv)
		}
		if err := g.proveStopped(probeEntry, mode, pv, rm.Stopped, want); err != nil {
			return err
		}
	}
	return nil
}

// proveStopped: the engine's stopped render for the probe values is the
// substituted running output with the stop plan applied (state: stopped).
func (g *gen) proveStopped(e Entry, mode runparams.Mode, pv Values, plan *StopPlan, substituted string) error {
	pv.stopped = true
	_, got, err := g.run(e, mode, pv, g.env)
	if err != nil {
		return fmt.Errorf("stopped probe render: %w", err)
	}
	want, err := ApplyStop(substituted, plan)
	if err != nil {
		return err
	}
	if canonical(got) != canonical(want) {
		return fmt.Errorf("the engine's stopped output for %+v is not the substituted output with the stop plan applied: the stopped form depends on more than the plan says, so the chart cannot carry it", pv)
	}
	return nil
}

// proveNoEnvironment: for chart-data, the committed chart must not depend on
// where `make chart` ran, so its profiles may not read the environment.
func (g *gen) proveNoEnvironment(e Entry, mode runparams.Mode, withOv Values, shipsRecipe bool, data string) error {
	if g.env != nil {
		return nil
	}
	envRes, withEnv, err := g.run(e, mode, withOv, func(string) (string, bool) { return "nrlsentinelenv", true })
	if err != nil {
		return fmt.Errorf("render with an environment: %w", err)
	}
	if shipsRecipe {
		if withEnv, err = recipeSentinel(envRes, withEnv); err != nil {
			return err
		}
	}
	if withEnv != data {
		return fmt.Errorf("the output depends on the environment (${oc.env:...}); the chart renders without one, so it cannot package this profile")
	}
	return nil
}

// sentinelNames are the generated names holding a sentinel, with the limit
// and pattern the chart checks the real name against.
// A shipped recipe's hash in a name is the sentinel's, as in the data.
func sentinelNames(docs []rendered.Doc, shipsRecipe bool) []NameRule {
	var out []NameRule
	hash := manifest.RecipeHash(shippedRecipe(docs))
	for _, d := range docs {
		if strings.Contains(d.Name, SentinelUser) || strings.Contains(d.Name, SentinelRunID) || strings.Contains(d.Name, SentinelNamespace) || strings.Contains(d.Name, SentinelName) {
			maxLength, pat := nameRule(d.Kind)
			if shipsRecipe {
				d.Name = strings.ReplaceAll(d.Name, hash, SentinelRecipeHash)
			}
			out = append(out, NameRule{Kind: d.Kind, Name: d.Name, MaxLength: maxLength, Pattern: pat})
		}
	}
	return out
}

// warnings are the engine's findings as the chart's NOTES show them.
func (g *gen) warnings(e Entry, res *pipeline.Result) []string {
	var out []string
	for _, d := range res.Diags.Sorted() {
		d.File = g.shown(d.File)
		if g.indexDir != "" {
			// Findings name the profile and recipe as loaded, relative to
			// the working directory; the chart says them as the index does.
			for _, f := range []string{e.Profile, e.Recipe} {
				d.Message = pathInText(f).ReplaceAllString(d.Message, "${1}"+strings.ReplaceAll(g.shown(f), "$", "$$")+"${2}")
			}
		}
		out = append(out, d.String())
	}
	return out
}

// knobInfo is which knobs a profile's mode can take, why not the others,
// and the profile's own values of them.
type knobInfo struct {
	avail    map[string]bool
	unavail  map[string]string
	defaults KnobDefaults
}

// knobs tries each knob's sentinel alone: a knob the engine refuses for
// the profile, or that changes nothing in the mode, is unavailable, and
// the chart refuses a value for it with the reason recorded here.
func (g *gen) knobs(e Entry, mode runparams.Mode) (*knobInfo, error) {
	base := sentinelValues("")
	res, data, err := g.run(e, mode, base, g.env)
	if err != nil {
		return nil, err
	}
	in := res.Profile.Infra
	ki := &knobInfo{avail: map[string]bool{}, unavail: map[string]string{}, defaults: knobDefaults(in)}
	all := sentinelKnobs()
	for _, n := range KnobNames {
		try := base
		try.Knobs = all.only(map[string]bool{n: true})
		_, got, err := g.run(e, mode, try, g.env)
		switch {
		case n == KnobEnv && len(in.Env) > 0:
			// The engine writes the profile's and the run's variables in one
			// name order; a substitution could not interleave them.
			ki.unavail[n] = "the profile sets env itself; add the variables there (or nrl-k8s render with infra.env)"
		case n == KnobKueueQueue && noKueueQueue(in) != "":
			ki.unavail[n] = noKueueQueue(in)
		case n == KnobWorkloadPriorityClass && err != nil && !kueueAlone(in) && !kueueBesideKAI(in):
			ki.unavail[n] = fmt.Sprintf("the profile does not queue with Kueue (scheduler.kind is %s, no scheduler.kueue); a WorkloadPriorityClass is Kueue's (for the pods' PriorityClass: the priorityClassName value)", in.Scheduler.Kind)
		case err != nil:
			ki.unavail[n] = err.Error()
		case got == data:
			ki.unavail[n] = unavailableWhy(n, mode, in)
		default:
			ki.avail[n] = true
		}
	}
	return ki, nil
}

// baseInfra is the profile a run's knobs are added to: loaded as the
// pipeline loads it for v, without the knobs.
func (g *gen) baseInfra(e Entry, v Values, env func(string) (string, bool)) (*profile.Infra, error) {
	infra, _ := pipeline.SplitOverrides(v.infra)
	prof, ds := profile.Load(profile.Input{Loader: g.loader, File: e.Profile, Overrides: infra, User: v.User, RunName: v.Name, Namespace: v.Namespace, Env: env})
	if prof == nil || ds.HasErrors() {
		return nil, fmt.Errorf("profile %s does not load: %v", e.Profile, ds)
	}
	return prof.Infra, nil
}

// pathInText matches file as a whole word of a message: not part of a
// longer path (a container path that ends the same way).
func pathInText(file string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s"'(=])` + regexp.QuoteMeta(file) + `($|[\s"'),:;])`)
}

// maxUser is the longest user that keeps every name within its limit,
// capped at 63 (a user is a DNS label). Names here hold no run id.
func maxUser(names []NameRule) int {
	best := 63
	for _, n := range names {
		k := strings.Count(n.Name, SentinelUser)
		if k == 0 {
			continue
		}
		fixed := len(n.Name) - k*len(SentinelUser)
		if m := (n.MaxLength - fixed) / k; m < best {
			best = m
		}
	}
	return best
}

// clusterFacts records the training capacity and the cluster.* values the
// chart's recipe check starts from. Capacity is counted as check's
// recipeVsCluster counts it (GPU groups only, fn/analyse/capacity: what KubeRay starts);
// TestCapacityMatchesEngine holds the two together.
func (g *gen) clusterFacts(e Entry, res *pipeline.Result, pm *ProfileMeta) error {
	ns, err := g.profileNamespace(e)
	if err != nil {
		return err
	}
	pm.Namespace = ns
	pm.Queues = queuesOf(res.Docs, pm.Defaults, kueueBesideKAI(res.Profile.Infra))
	pm.Capacity.GPUsPerWorker = []int64{}
	seen := map[int64]bool{}
	for _, wg := range check.ClusterCount(res.Profile.Infra.Kuberay.Training).GPUGroups() {
		pm.Capacity.GPUNodes += wg.Pods
		if !seen[wg.GPUsPerPod] {
			seen[wg.GPUsPerPod] = true
			pm.Capacity.GPUsPerWorker = append(pm.Capacity.GPUsPerWorker, wg.GPUsPerPod)
		}
	}
	sort.Slice(pm.Capacity.GPUsPerWorker, func(i, j int) bool { return pm.Capacity.GPUsPerWorker[i] < pm.Capacity.GPUsPerWorker[j] })
	if res.Recipe != nil && res.Recipe.Invocation != nil {
		for _, raw := range res.Recipe.Invocation.Overrides {
			o, err := hydra.Parse(raw)
			if err != nil || o.Dynamic || o.Op == hydra.Delete {
				continue
			}
			if k := strings.TrimPrefix(o.Key.String(), "cluster."); k == "gpus_per_node" || k == "num_nodes" {
				if n, ok := check.AsInt(o.Value); ok {
					pm.EntrypointCluster[k] = n
				}
			}
		}
	}
	rec, err := g.loader.Load(e.Recipe)
	if err != nil {
		return err
	}
	for _, k := range []string{"gpus_per_node", "num_nodes"} {
		if v, ok := tree.Lookup(rec.Tree, tree.ParsePath("cluster."+k)); ok {
			if n, ok := check.AsInt(v); ok {
				pm.RecipeCluster[k] = n
			}
		}
	}
	return nil
}

// profileNamespace renders without a namespace override to read the
// profile's own. The run is named, as every release is: a profile that
// reads ${run.name} (per-run checkpoint folders) loads only for a named run.
func (g *gen) profileNamespace(e Entry) (string, error) {
	res := pipeline.Render(g.loader, pipeline.Request{Recipe: e.Recipe, Profile: e.Profile, Env: g.env, Run: runparams.Run{Mode: runparams.RayJob, User: SentinelUser, Name: SentinelName}})
	if res.Profile == nil {
		return "", fmt.Errorf("profile does not load: %v", res.Diags)
	}
	if ns := res.Profile.Infra.Namespace; ns != profile.DefaultNamespace {
		return ns, nil
	}
	// No namespace in the profile (the loader's default): the profile is
	// written for any namespace, and NOTES must not say otherwise.
	return "", nil
}
