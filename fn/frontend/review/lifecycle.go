package review

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
)

// A run's life in Git (docs/gitops.md): the base branch is what the cluster
// runs, so a run whose base render is running (not stopped) has started.
// KubeRay reads a RayJob's spec once, when it starts it (the cluster from
// rayClusterSpec, the job from entrypoint), and never applies a changed
// pod template to a RayCluster's running Pods; Kueue's webhook refuses a
// changed queue on a running job. An edit of such a field merges into Git
// and never reaches the run while `status` says it runs: it is refused, and
// the message gives the two ways that do take effect.

// LiveRayClusterFields are the worker group fields KubeRay applies to a
// running RayCluster (it scales worker groups to them); everything else in
// its spec reaches only Pods created later. The started-run policy
// (fn/frontend/policy) lets them through for the same reason.
var LiveRayClusterFields = []string{"maxReplicas", "minReplicas", "replicas"}

var liveRayClusterFields = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range LiveRayClusterFields {
		m[f] = true
	}
	return m
}()

// stateOf is the declared state of a render's Ray objects: stopped when
// any carries runparams.StateAnnotation stopped, else running; "" when the
// render has no RayJob or RayCluster (nothing started).
func stateOf(r *RunFacts) runparams.State {
	state := runparams.State("")
	for ref, canon := range r.Objects {
		if !isRayRef(ref) {
			continue
		}
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(canon), &obj) != nil {
			continue
		}
		if obj.Metadata.Annotations[runparams.StateAnnotation] == string(runparams.Stopped) {
			return runparams.Stopped
		}
		state = runparams.Running
	}
	return state
}

func isRayRef(ref string) bool {
	return strings.HasPrefix(ref, "RayJob/") || strings.HasPrefix(ref, "RayCluster/")
}

// lifecycle says how a run's declared state changes, "" when it does not
// (or the run is new or removed).
func lifecycle(o, c *RunFacts) string {
	before, after := stateOf(o), stateOf(c)
	switch {
	case before == runparams.Running && after == runparams.Stopped:
		return "stopped by this change: KubeRay deletes its cluster (a Kueue run's RayJob is pruned), the object stays as its record"
	case before == runparams.Stopped && after == runparams.Running:
		return "started again by this change: KubeRay creates a new cluster from the spec as it is now and submits the job again (it resumes from its checkpoints if the recipe does)"
	case before == runparams.Running && after == "" && len(c.Objects) > 0:
		return "its RayJob or RayCluster is removed: the sync prunes it, which stops the run"
	}
	return ""
}

// startedEdits are the edits of a started run that would never reach it:
// per RayJob or RayCluster present on both sides, the changed fields
// KubeRay does not apply to a running object ("RayJob/x: spec.entrypoint").
// None when the base render is stopped or this render stops the run.
func startedEdits(o, c *RunFacts) []string {
	if stateOf(o) != runparams.Running || stateOf(c) != runparams.Running {
		return nil
	}
	var out []string
	for ref, canon := range c.Objects {
		prev, ok := o.Objects[ref]
		if !ok || prev == canon || !isRayRef(ref) {
			continue
		}
		var before, after map[string]any
		if json.Unmarshal([]byte(prev), &before) != nil || json.Unmarshal([]byte(canon), &after) != nil {
			continue
		}
		var paths []string
		if strings.HasPrefix(ref, "RayCluster/") {
			paths = rayClusterEdits(before, after)
		} else {
			changedPaths("spec", before["spec"], after["spec"], nil, 0, &paths)
		}
		if queueOf(before) != queueOf(after) {
			paths = append(paths, "metadata.labels."+kueue.QueueLabel+" (Kueue's webhook refuses it on a running job)")
		}
		if len(paths) > 0 {
			sort.Strings(paths)
			out = append(out, ref+": "+strings.Join(paths, ", "))
		}
	}
	sort.Strings(out)
	return out
}

// rayClusterEdits are the changed fields of a running RayCluster KubeRay
// does not apply: it scales each worker group to its replicas and creates
// the Pods of a group added by name, but a changed pod template reaches
// only Pods created later and a removed group's Pods stay.
func rayClusterEdits(before, after map[string]any) []string {
	bs, _ := before["spec"].(map[string]any)
	as, _ := after["spec"].(map[string]any)
	var paths []string
	changedPaths("spec", withoutKey(bs, "workerGroupSpecs"), withoutKey(as, "workerGroupSpecs"), nil, 0, &paths)
	bg, ag := groupsByName(bs), groupsByName(as)
	for name, g := range bg {
		path := "spec.workerGroupSpecs[groupName=" + name + "]"
		if a, ok := ag[name]; ok {
			changedPaths(path, g, a, liveRayClusterFields, 2, &paths)
		} else {
			paths = append(paths, path+" removed (KubeRay leaves its Pods)")
		}
	}
	return paths
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func groupsByName(spec map[string]any) map[string]any {
	out := map[string]any{}
	groups, _ := spec["workerGroupSpecs"].([]any)
	for i, g := range groups {
		m, _ := g.(map[string]any)
		name, _ := m["groupName"].(string)
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		out[name] = g
	}
	return out
}

func queueOf(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	q, _ := labels[kueue.QueueLabel].(string)
	return q
}

// maxEditDepth bounds how deep a changed path is named: deep enough to say
// which group or field ("spec.rayClusterSpec.workerGroupSpecs[1].template"),
// short enough to read.
const maxEditDepth = 4

// changedPaths appends the paths below path where a and b differ, a list
// element by index, leaves of live (field names KubeRay applies to a
// running object) left out.
func changedPaths(path string, a, b any, live map[string]bool, depth int, out *[]string) {
	if reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	al, alok := a.([]any)
	bl, blok := b.([]any)
	switch {
	case aok && bok && depth < maxEditDepth:
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			if live[k] {
				continue
			}
			changedPaths(path+"."+k, am[k], bm[k], live, depth+1, out)
		}
	case alok && blok && len(al) == len(bl) && depth < maxEditDepth:
		for i := range al {
			changedPaths(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], live, depth+1, out)
		}
	default:
		*out = append(*out, path)
	}
}

// StartedRunRefusal is the gate's reason for refusing edits of a started
// run, naming them and the ways that take effect.
func StartedRunRefusal(d RunDiff) string {
	return fmt.Sprintf("the run has started (the base branch runs it) and this change edits what KubeRay or Kueue never apply to a running run: %s; the edit would merge and never reach it. Instead: stop it (spec.state: stopped) in this change and edit it with spec.state: run in the next (KubeRay starts it again from the edited spec), or leave it and add a new run under a new name",
		strings.Join(d.StartedEdits, "; "))
}
