package chartgen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// The chart's `state` value. A stopped run is the engine's (manifest.Stop,
// applied by pipeline.Render for runparams.Stopped); the chart does not
// know its rule. For each render the generator reads off the engine's own
// stopped render how it differs from the running one (a StopPlan: the
// documents it leaves out, the fields it sets), and the chart applies that
// list to the substituted documents. A stopped render's differences are a
// few fields per object, so the plan costs a few hundred bytes per render
// where a second copy of every render would double files/rendered.

// StopPlan is how a render's stopped form differs from it.
type StopPlan struct {
	// LeftOut are the indices of the documents the stopped form has not.
	LeftOut []int `json:"leftOut"`
	// Set are the fields the stopped form sets in the documents it keeps.
	Set []FieldSet `json:"set"`
}

// FieldSet sets one field of one document: the maps on Path are created
// when missing (a run without annotations has no metadata.annotations).
type FieldSet struct {
	Doc   int      `json:"doc"`
	Path  []string `json:"path"`
	Value any      `json:"value"`
}

// StateMeta tells the chart what a release's state means to a live object
// (the upgrade guard lets a stopped run be started again or changed).
type StateMeta struct {
	Annotation string   `json:"annotation"`
	Stopped    string   `json:"stopped"`
	States     []string `json:"states"`
}

var stateMeta = StateMeta{Annotation: vocab.StateAnnotation, Stopped: string(runparams.Stopped), States: stateNames()}

func stateNames() []string {
	out := make([]string, len(runparams.States))
	for i, s := range runparams.States {
		out[i] = string(s)
	}
	return out
}

// stopPlan reads the plan off the engine's renders of the variant, running
// and stopped, with the knobs bare, at their sentinels and with suspend off
// (a knob's sentinel can equal the stopped form's value: suspend's is
// true). Every base must leave out the same documents; the fields set are
// the union (the proof in proveSubstitution then holds the plan to the
// engine for the probe values).
func (g *gen) stopPlan(e Entry, mode runparams.Mode, sent Values, ki *knobInfo) (*StopPlan, error) {
	bases := []Values{sent}
	bare := sent
	bare.Knobs = Knobs{}
	bases = append(bases, bare)
	if ki.avail[KnobSuspend] {
		off := bare
		f := false
		off.Knobs.Suspend = &f
		bases = append(bases, off)
	}
	var plan *StopPlan
	for _, b := range bases {
		p, err := g.diffStopped(e, mode, b)
		if err != nil {
			return nil, err
		}
		if plan == nil {
			plan = p
			continue
		}
		if !reflect.DeepEqual(plan.LeftOut, p.LeftOut) {
			return nil, fmt.Errorf("stopped: the engine leaves out documents %v or %v depending on the per-run values; the chart carries one list, so it cannot package this profile's stopped form", plan.LeftOut, p.LeftOut)
		}
		if plan.Set, err = unionSets(plan.Set, p.Set); err != nil {
			return nil, err
		}
	}
	for _, f := range plan.Set {
		b, _ := json.Marshal(f.Value)
		for _, s := range sentinelTexts() {
			if strings.Contains(string(b), s) || strings.Contains(strings.Join(f.Path, "."), s) {
				return nil, fmt.Errorf("stopped: the engine sets %s of document %d to %s, which holds the placeholder %s; the chart applies the plan after substituting, so it cannot carry it", strings.Join(f.Path, "."), f.Doc, b, s)
			}
		}
	}
	return plan, nil
}

// diffStopped renders v running and stopped and says how they differ.
func (g *gen) diffStopped(e Entry, mode runparams.Mode, v Values) (*StopPlan, error) {
	_, running, err := g.run(e, mode, v, g.env)
	if err != nil {
		return nil, err
	}
	v.stopped = true
	_, stopped, err := g.run(e, mode, v, g.env)
	if err != nil {
		return nil, fmt.Errorf("stopped: %w", err)
	}
	return DiffStopped(running, stopped)
}

// DiffStopped is the plan that turns the documents of running (a JSON
// array, as EncodeDocs writes it) into those of stopped: stopped must be
// running's documents in order, some left out, with fields added or
// changed; anything else (a field removed, a list changed) is an error.
func DiffStopped(running, stopped string) (*StopPlan, error) {
	var run, stop []map[string]any
	if err := json.Unmarshal([]byte(running), &run); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(stopped), &stop); err != nil {
		return nil, err
	}
	plan := &StopPlan{LeftOut: []int{}, Set: []FieldSet{}}
	j := 0
	for i, d := range run {
		if j < len(stop) && docID(d) == docID(stop[j]) {
			sets, err := diffFields(i, nil, d, stop[j])
			if err != nil {
				return nil, fmt.Errorf("stopped: %s: %w", docID(d), err)
			}
			plan.Set = append(plan.Set, sets...)
			j++
			continue
		}
		plan.LeftOut = append(plan.LeftOut, i)
	}
	if j < len(stop) {
		return nil, fmt.Errorf("stopped: the stopped render has %s, which the running one has not (in that place); expected the running documents, some left out", docID(stop[j]))
	}
	return plan, nil
}

// docID names a document by its kind, namespace and name.
func docID(d map[string]any) string {
	md, _ := d["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v %v/%v", d["apiVersion"], d["kind"], md["namespace"], md["name"])
}

// diffFields lists the fields b sets that a has not, or has another value
// of, sorted by path.
func diffFields(doc int, path []string, a, b map[string]any) ([]FieldSet, error) {
	var out []FieldSet
	for k := range a {
		if _, ok := b[k]; !ok {
			return nil, fmt.Errorf("the stopped form removes %s; expected fields added or changed only", strings.Join(append(path, k), "."))
		}
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := append(append([]string(nil), path...), k)
		av, had := a[k]
		am, aMap := av.(map[string]any)
		bm, bMap := b[k].(map[string]any)
		switch {
		case bMap && (aMap || !had):
			// A new map is its fields: the chart's documents may already
			// have it (a label or annotation a value adds).
			if !had {
				am = map[string]any{}
			}
			sets, err := diffFields(doc, p, am, bm)
			if err != nil {
				return nil, err
			}
			out = append(out, sets...)
		case had && reflect.DeepEqual(av, b[k]):
		case had && (isList(av) || isList(b[k])):
			return nil, fmt.Errorf("the stopped form changes the list %s; expected scalar fields and maps", strings.Join(p, "."))
		default:
			out = append(out, FieldSet{Doc: doc, Path: p, Value: b[k]})
		}
	}
	return out, nil
}

func isList(v any) bool { _, ok := v.([]any); return ok }

// unionSets merges two plans' fields; one field with two values is an error.
func unionSets(a, b []FieldSet) ([]FieldSet, error) {
	key := func(f FieldSet) string { return fmt.Sprintf("%d\x00%s", f.Doc, strings.Join(f.Path, "\x00")) }
	seen := map[string]FieldSet{}
	out := append(make([]FieldSet, 0, len(a)+len(b)), a...)
	for _, f := range a {
		seen[key(f)] = f
	}
	for _, f := range b {
		if old, ok := seen[key(f)]; ok {
			if !reflect.DeepEqual(old.Value, f.Value) {
				return nil, fmt.Errorf("stopped: the engine sets %s of document %d to %v or %v depending on the per-run values; the chart carries one value", strings.Join(f.Path, "."), f.Doc, old.Value, f.Value)
			}
			continue
		}
		seen[key(f)] = f
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Doc != out[j].Doc {
			return out[i].Doc < out[j].Doc
		}
		return strings.Join(out[i].Path, "\x00") < strings.Join(out[j].Path, "\x00")
	})
	return out, nil
}

// ApplyStop is the chart's "nemo-rl-run.stop" in Go: the plan applied to
// substituted data (a JSON array of documents). The generator uses it to
// prove the plan on probe values; the parity tests hold the template to it.
func ApplyStop(data string, plan *StopPlan) (string, error) {
	var docs []map[string]any
	if err := json.Unmarshal([]byte(data), &docs); err != nil {
		return "", err
	}
	for _, f := range plan.Set {
		if f.Doc < 0 || f.Doc >= len(docs) || len(f.Path) == 0 {
			return "", fmt.Errorf("stop plan: field %v of document %d: no such document", f.Path, f.Doc)
		}
		m := docs[f.Doc]
		for _, k := range f.Path[:len(f.Path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[f.Path[len(f.Path)-1]] = f.Value
	}
	left := map[int]bool{}
	for _, i := range plan.LeftOut {
		left[i] = true
	}
	kept := make([]map[string]any, 0, len(docs))
	for i, d := range docs {
		if !left[i] {
			kept = append(kept, d)
		}
	}
	b, err := json.Marshal(kept)
	return string(b), err
}

// sentinelTexts are every placeholder the chart substitutes.
func sentinelTexts() []string {
	return []string{SentinelUser, SentinelRunID, SentinelNamespace, SentinelName, SentinelImage, SentinelLabelKey, SentinelLabelValue,
		SentinelAnnotationKey, SentinelAnnotationValue, SentinelOverride, SentinelRecipe, SentinelRecipeHash, SentinelQueue, SentinelKueueQueue, SentinelPriorityClass, SentinelWorkloadPriority,
		SentinelNodeKey, SentinelNodeValue, SentinelTolerationKey, SentinelEnvName, SentinelEnvValue}
}
