package chartgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// schemaTemplate is values.schema.json; %[1]s is the profile enum, the rest
// are the patterns the engine's inputs must match for the chart's string
// substitution to be exact, the engine's enumerations, and (%[16]s) the
// per-profile and per-mode rules read off the chart's data (schemaRules).
// Helm checks it at install, upgrade, template and lint, before any
// template runs, and names the value's path and what it expects; the
// template checks only what a schema cannot say (required values, which
// helm lint's empty defaults lack; the generated names' lengths; keys and
// entries the rendered objects already carry; the recipe's content; the
// release's own name and namespace).
const schemaTemplate = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "nemo-rl-run values",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "global": {
      "description": "Helm passes the parent chart's global values to every subchart; this chart reads none of them, and accepts them so that it can be a dependency of an umbrella chart.",
      "type": "object"
    },
    "profile": {
      "description": "Packaged infra profile to run on (required). The chart README lists them.",
      "type": "string",
      "enum": %[1]s
    },
    "user": {
      "description": "Submitting user, as ${user:} in the profile (required): already normalised, i.e. a DNS label: lower case letters, digits and '-' ('_' and '.' become '-', as nrl-k8s normalises them).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "image": {
      "description": "Image of every container of the run's pods (Ray head and workers, the dev pod); in mode services, of the shared services' containers (as nrl-k8s render --only-deployments --image); empty: the profile's.",
      "type": "string",
      "maxLength": 512,
      "pattern": %[4]s
    },
    "labels": {
      "description": "Labels for every object and pod template of the run (as nrl-k8s render --label); keys the rendered objects already carry are refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string", "maxLength": 63, "pattern": %[6]s}
    },
    "annotations": {
      "description": "Annotations for every object and pod template of the run (as nrl-k8s render --annotation); keys the rendered objects already carry are refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string"}
    },
    "mode": {
      "description": "rayjob: one RayJob that creates and tears down its cluster; raycluster: long-lived RayClusters plus the RayJobs submitted to them; dev: the CPU-only dev pod; services: only the profile's deployments and their Services, shared by the user's runs, as a release of their own (nrl-k8s render --only-deployments; profiles with deployments).",
      "type": "string",
      "enum": %[15]s
    },
    "state": {
      "description": "The run's declared life, as nrl-k8s render --state: run, or stopped: rendered so that nothing starts it (the engine's stopped form: RayJob and RayCluster spec.suspend true and annotated %[14]s: stopped; an object Kueue admits, a RayJob submitted to a RayCluster and the dev pod left out; Deployments at 0 replicas). helm upgrade --set state=stopped stops a running run; state=run starts a stopped one again.",
      "type": "string",
      "enum": %[13]s
    },
    "namespace": {
      "description": "Namespace of every object; empty means the release namespace (helm --namespace).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "runId": {
      "description": "Run id: labels every object of the run; in raycluster mode it is the training job's submission id and is exported as NRL_K8S_RUN_ID.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "overrides": {
      "description": "Hydra overrides appended to the training driver call (key=value, +key=value, ++key=value, ~key); characters limited to A-Z a-z 0-9 _ @ %% + = : , . / ~ [ ] -.",
      "type": "array",
      "items": {
        "type": "string",
        "pattern": %[3]s
      }
    },
    "deployments": {
      "description": "false (the only value a release accepts; kept for values files of earlier charts): a run release never installs the profile's deployments and their Services (as nrl-k8s render --no-deployments): two releases would both claim them, and helm uninstall of one would delete what the other still uses; install them once per user and namespace as a release of their own with mode services.",
      "type": "boolean",
      "enum": [false]
    },
    "queue": {
      "description": "Queue of the run, as infra.scheduler.queue: for scheduler.kind kai the kai.scheduler/queue label of every object and pod template; for kind kueue the LocalQueue, the kueue.x-k8s.io/queue-name label of the RayJob (or RayCluster) Kueue admits (a DNS-1123 subdomain); empty: the profile's.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[7]s
    },
    "kueueQueue": {
      "description": "Kueue LocalQueue of the run where KAI places and Kueue admits (profiles with scheduler: {kind: kai, kueue: {queue: ...}}), as infra.scheduler.kueue.queue: the kueue.x-k8s.io/queue-name label of the RayJob (or RayCluster) Kueue admits, beside the KAI queue (the queue value); a DNS-1123 subdomain; empty: the profile's.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[8]s
    },
    "priorityClassName": {
      "description": "PriorityClass of every Ray pod of the run (heads and workers), as infra.scheduler.priorityClassName; empty: the profile's (none unless it sets one).",
      "type": "string",
      "maxLength": 253,
      "pattern": %[8]s
    },
    "workloadPriorityClass": {
      "description": "Kueue WorkloadPriorityClass of the run (profiles that name Kueue), as infra.scheduler.workloadPriorityClass (scheduler.kind kueue) or infra.scheduler.kueue.workloadPriorityClass (KAI places, Kueue admits): the kueue.x-k8s.io/priority-class label beside Kueue's queue label; empty: the profile's (none unless it sets one).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[8]s
    },
    "nodeSelector": {
      "description": "Node labels added to every GPU worker's nodeSelector, as keys added to infra.placement.nodeSelector (heads and CPU groups are left alone); a key a GPU worker already selects with another value is refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string", "maxLength": 63, "pattern": %[6]s}
    },
    "tolerations": {
      "description": "Tolerations appended to every GPU worker's, as entries appended to infra.placement.tolerations (operator defaults to Equal, effect to NoSchedule); one a GPU worker already has is refused.",
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["key"],
        "properties": {
          "key": {"type": "string", "maxLength": 317, "pattern": %[5]s},
          "operator": {"type": "string", "enum": %[9]s},
          "value": {"type": "string", "maxLength": 63, "pattern": %[6]s},
          "effect": {"type": "string", "enum": %[10]s},
          "tolerationSeconds": {"type": "integer"}
        },
        "allOf": [
          {"$comment": "Exists matches any value of the key: no value with it.",
           "if": {"required": ["operator"], "properties": {"operator": {"const": "Exists"}}},
           "then": {"properties": {"value": {"maxLength": 0}}}},
          {"$comment": "only a NoExecute taint evicts after a time (effect defaults to NoSchedule).",
           "if": {"required": ["tolerationSeconds"], "properties": {"tolerationSeconds": {"type": "integer"}}},
           "then": {"required": ["effect"], "properties": {"effect": {"const": "NoExecute"}}}}
        ]
      }
    },
    "env": {
      "description": "Environment variables added to every container of the run's Ray pods (after their own, in name order), as infra.env: a mapping NAME: value, or a list of {name, value}. Names a Ray container already sets are refused, and so are literal values under credential-looking names (reference a Secret in a profile instead).",
      "type": ["object", "array"],
      "propertyNames": {"pattern": %[11]s},
      "additionalProperties": {"type": "string"},
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["name"],
        "properties": {
          "name": {"type": "string", "pattern": %[11]s},
          "value": {"type": "string"}
        }
      }
    },
    "suspend": {
      "description": "RayJob spec.suspend (rayjob mode), as infra.launch.rayjob.suspend: true creates the RayJob without its cluster until it is resumed; null: the profile's.",
      "type": ["boolean", "null"]
    },
    "ttlSecondsAfterFinished": {
      "description": "RayJob spec.ttlSecondsAfterFinished (rayjob mode), as infra.launch.rayjob.ttlSecondsAfterFinished: seconds KubeRay keeps the finished RayJob; 0 removes it at once; null: the profile's.",
      "type": ["integer", "null"],
      "minimum": 0,
      "maximum": %[12]d
    },
    "test": {
      "description": "helm test: a hook Pod running nrl-k8s status for the release, with a read-only Role (README, \"helm test\"). Off by default: helm template output carries the hook objects when on.",
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enabled": {"description": "Render the helm test hook (ServiceAccount, Role, RoleBinding, Pod).", "type": "boolean"},
        "image": {"description": "The nrl-k8s image the hook runs (name:tag or name@sha256:digest); required with enabled.", "type": "string", "maxLength": 512, "pattern": %[4]s}
      },
      "if": {"required": ["enabled"], "properties": {"enabled": {"const": true}}},
      "then": {"required": ["image"], "properties": {"image": {"minLength": 1}}}
    },
    "recipe": {
      "description": "A recipe the run ships and runs (--set-file recipe=FILE, rayjob mode), as launch.recipeSource: configMap renders it: a self-contained mapping without defaults: or infra: (nrl-k8s recipe-merge RECIPE prints the merged recipe); empty: the profile's paired recipe.",
      "type": "string"
    }
  },
  "allOf": %[16]s
}
`

// Patterns of the values the chart puts into the rendered data: none needs
// JSON escaping except annotation values, which the template writes with
// toJson as encoding/json writes them.
const (
	// ImagePattern is an image reference (name[:tag][@digest]), optional.
	ImagePattern = `^([a-z0-9]([-a-zA-Z0-9._:/]*[a-zA-Z0-9_])?(@sha256:[a-f0-9]{64})?)?$`
	// QualifiedNamePattern is a label or annotation key: [prefix/]name.
	QualifiedNamePattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// LabelValuePattern is a label value (possibly empty).
	LabelValuePattern = `^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
)

// optionalSubdomain is a PriorityClass name (a DNS-1123 subdomain) or empty.
var optionalSubdomain = "^(" + strings.TrimSuffix(strings.TrimPrefix(dns1123Sub, "^"), "$") + ")?$"

func list(items []string) string {
	b, _ := json.Marshal(items)
	return strings.ReplaceAll(string(b), ",", ", ")
}

// Schema renders values.schema.json for the index's profiles; meta and
// files are the chart data Generate made for them (files/profiles.json and
// files/rendered), which the per-profile rules are read off.
func Schema(idx *Index, meta *Meta, files map[string][]byte) ([]byte, error) {
	names := []string{""}
	for _, e := range idx.Profiles {
		names = append(names, e.Name)
	}
	enum, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	rules, err := schemaRules(idx, meta, files)
	if err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	allOf, err := json.Marshal(rules)
	if err != nil {
		return nil, err
	}
	optionalName := "^(" + strings.TrimSuffix(strings.TrimPrefix(NamePattern, "^"), "$") + ")?$"
	raw := fmt.Sprintf(schemaTemplate, strings.ReplaceAll(string(enum), ",", ", "), q(optionalName), q(OverridePattern),
		q(ImagePattern), q(QualifiedNamePattern), q(LabelValuePattern), q(LabelValuePattern), q(optionalSubdomain),
		list(profile.Operators), list(profile.Effects), q(profile.EnvNamePattern), MaxTTL, list(stateMeta.States), stateMeta.Annotation,
		list(chartModes()), allOf)
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(raw), "", "  "); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// chartModes are the chart's modes: the engine's, then services.
func chartModes() []string {
	out := make([]string, 0, len(runparams.Modes)+1)
	for _, m := range runparams.Modes {
		out = append(out, string(m))
	}
	return append(out, ServicesMode)
}

// obj is a JSON Schema object.
type obj = map[string]any

// when is a rule's condition on the values that choose a render, as
// "nemo-rl-run.key" chooses it: the profiles (nil: any), the modes (nil:
// any; an absent mode is rayjob), whether runId and recipe are set (nil:
// either; an empty one is unset).
type when struct {
	profiles      []string
	modes         []string
	runID, recipe *bool
}

func (w when) schema() obj {
	props, req := obj{}, []string{}
	if w.profiles != nil {
		props["profile"] = obj{"enum": w.profiles}
		req = append(req, "profile")
	}
	if w.modes != nil {
		props["mode"] = obj{"enum": w.modes}
		if !slices.Contains(w.modes, string(runparams.RayJob)) {
			req = append(req, "mode")
		}
	}
	for _, f := range []struct {
		name string
		on   *bool
	}{{"runId", w.runID}, {"recipe", w.recipe}} {
		switch {
		case f.on == nil:
		case *f.on:
			props[f.name] = obj{"minLength": 1}
			req = append(req, f.name)
		default:
			props[f.name] = obj{"maxLength": 0}
		}
	}
	c := obj{"properties": props}
	if len(req) > 0 {
		c["required"] = req
	}
	return c
}

// rule is an if/then of the schema: with w, the values in then must match.
func rule(w when, then obj) obj {
	return obj{"if": w.schema(), "then": obj{"properties": then}}
}

// unsetSchema says a knob is unset, as the template reads it: an empty
// string, mapping or list, or null.
func unsetSchema(knob string) (obj, error) {
	switch knob {
	case KnobQueue, KnobKueueQueue, KnobPriorityClassName, KnobWorkloadPriorityClass:
		return obj{"const": ""}, nil
	case KnobNodeSelector:
		return obj{"maxProperties": 0}, nil
	case KnobTolerations:
		return obj{"maxItems": 0}, nil
	case KnobEnv:
		return obj{"maxProperties": 0, "maxItems": 0}, nil
	case KnobSuspend, KnobTTL:
		return obj{"type": "null"}, nil
	}
	return nil, fmt.Errorf("knob %s: no schema says it unset", knob)
}

// ruleGroups gathers per-profile rules, one rule per condition and
// requirement with the profiles it holds for, in the order first added.
type ruleGroups struct {
	order []string
	rules map[string]*ruleGroup
}

type ruleGroup struct {
	w    when
	then obj
}

func (g *ruleGroups) add(name string, w when, then obj) error {
	if len(then) == 0 {
		return nil
	}
	k, err := json.Marshal([]any{w.modes, w.runID, w.recipe, then})
	if err != nil {
		return err
	}
	if g.rules == nil {
		g.rules = map[string]*ruleGroup{}
	}
	r := g.rules[string(k)]
	if r == nil {
		r = &ruleGroup{w: w, then: then}
		g.rules[string(k)] = r
		g.order = append(g.order, string(k))
	}
	r.w.profiles = append(r.w.profiles, name)
	return nil
}

// schemaRules are the values a profile or mode refuses, each rule from the
// chart data the template used to check them with: a profile's modes, a
// recipe value it cannot ship, one image for shared services that run
// several, the knobs a render has no sentinel for (with the engine's
// reason in files/profiles.json and the README), and a Kueue queue's name.
func schemaRules(idx *Index, meta *Meta, files map[string][]byte) ([]obj, error) {
	var notRayJob []string
	for _, m := range chartModes() {
		if m != string(runparams.RayJob) {
			notRayJob = append(notRayJob, m)
		}
	}
	out := []obj{
		// A services release installs the shared services, not a run; the
		// helm test suite reports on a run.
		rule(when{modes: []string{ServicesMode}}, obj{"runId": obj{"const": ""}, "overrides": obj{"maxItems": 0},
			"test": obj{"properties": obj{"enabled": obj{"const": false}}}}),
		// The engine ships a recipe in a ConfigMap for a RayJob only
		// (launch.recipeSource=configMap).
		rule(when{modes: notRayJob}, obj{"recipe": obj{"const": ""}}),
	}
	var g ruleGroups
	for _, e := range idx.Profiles {
		pm := meta.Profiles[e.Name]
		if pm == nil {
			return nil, fmt.Errorf("profile %s: no chart data", e.Name)
		}
		if err := g.add(e.Name, when{}, obj{"mode": obj{"enum": pm.Modes}}); err != nil {
			return nil, err
		}
		if pm.NoRecipeValue != "" {
			if err := g.add(e.Name, when{}, obj{"recipe": obj{"const": ""}}); err != nil {
				return nil, err
			}
		}
		if svc := pm.Renders[ServicesMode]; svc != nil && !bytes.Contains(files[svc.File], []byte(SentinelImage)) {
			// Its shared services run more than one image: one value cannot replace them.
			if err := g.add(e.Name, when{modes: []string{ServicesMode}}, obj{"image": obj{"const": ""}}); err != nil {
				return nil, err
			}
		}
		if err := renderRules(&g, e.Name, pm, files); err != nil {
			return nil, fmt.Errorf("profile %s: %w", e.Name, err)
		}
	}
	for _, k := range g.order {
		r := g.rules[k]
		out = append(out, rule(r.w, r.then))
	}
	return out, nil
}

// renderRules adds a profile's per-render rules: per mode those every
// render of the mode has, then per render (run id, recipe value) the rest.
func renderRules(g *ruleGroups, name string, pm *ProfileMeta, files map[string][]byte) error {
	byMode := map[string][]string{}
	perKey := map[string]map[string]string{} // key → property → its schema's JSON
	for _, key := range slices.Sorted(maps.Keys(pm.Renders)) {
		props, err := renderProps(pm.Renders[key], files)
		if err != nil {
			return fmt.Errorf("render %s: %w", key, err)
		}
		mode, _, _ := strings.Cut(key, ".")
		byMode[mode] = append(byMode[mode], key)
		perKey[key] = props
	}
	for _, mode := range chartModes() {
		keys := byMode[mode]
		if len(keys) == 0 {
			continue
		}
		common := obj{}
		for prop, sch := range perKey[keys[0]] {
			if allHave(perKey, keys, prop, sch) {
				common[prop] = json.RawMessage(sch)
			}
		}
		if err := g.add(name, when{modes: []string{mode}}, common); err != nil {
			return err
		}
		for _, key := range keys {
			rest := obj{}
			for prop, sch := range perKey[key] {
				if _, ok := common[prop]; !ok {
					rest[prop] = json.RawMessage(sch)
				}
			}
			runID, recipe := strings.HasSuffix(key, ".runid"), strings.Contains(key, ".recipe")
			if err := g.add(name, when{modes: []string{mode}, runID: &runID, recipe: &recipe}, rest); err != nil {
				return err
			}
		}
	}
	return nil
}

func allHave(perKey map[string]map[string]string, keys []string, prop, sch string) bool {
	for _, k := range keys {
		if perKey[k][prop] != sch {
			return false
		}
	}
	return true
}

// renderProps are what one render requires of the values, as JSON: unset
// for each knob it has no sentinel for; a LocalQueue name for the queue
// where the render holds Kueue's queue label.
func renderProps(rm *RenderMeta, files map[string][]byte) (map[string]string, error) {
	data, ok := files[rm.File]
	if !ok {
		return nil, fmt.Errorf("%s: not generated", rm.File)
	}
	props := map[string]obj{}
	for knob := range rm.Unavailable {
		sch, err := unsetSchema(knob)
		if err != nil {
			return nil, err
		}
		props[knob] = sch
	}
	if _, ok := props[KnobQueue]; !ok && bytes.Contains(data, []byte(knobSentinels.KueueQueue.Token())) {
		props[KnobQueue] = obj{"pattern": optionalSubdomain}
	}
	out := map[string]string{}
	for k, v := range props {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[k] = string(b)
	}
	return out, nil
}
