package review

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
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

// rayState is what a render's Ray objects say of the run, read from
// their specs by runparams.StateFromSpec (never from the state annotation,
// which any profile or hand edit could write): state "" when the render
// has no objects; kueue when a Ray object is labelled with a LocalQueue.
type rayState struct {
	state runparams.State
	ray   bool
	kueue bool
}

// stateOf is the run's state as the cluster runs its render: running when
// a RayJob or RayCluster of it runs (present, and not suspended outside
// Kueue), stopped when every one is suspended, or when none is present but
// the run's other objects are (a stopped Kueue run renders without its
// RayJob or RayCluster: manifest.Stop); "" when the render has no object.
func stateOf(r *RunFacts) rayState {
	var st rayState
	for ref, canon := range r.Objects {
		if !isRayRef(ref) {
			continue
		}
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Suspend *bool `json:"suspend"`
			} `json:"spec"`
		}
		if json.Unmarshal([]byte(canon), &obj) != nil {
			continue
		}
		queue := obj.Metadata.Labels[vocab.KueueQueueLabel]
		st.ray, st.kueue = true, st.kueue || queue != ""
		suspended := obj.Spec.Suspend != nil && *obj.Spec.Suspend
		if runparams.StateFromSpec(true, suspended, queue) == runparams.Running {
			st.state = runparams.Running
		}
	}
	switch {
	case st.state == runparams.Running:
	case st.ray:
		st.state = runparams.Stopped
	case r != nil && len(r.Objects) > 0:
		st.state = runparams.StateFromSpec(false, false, "")
	}
	return st
}

func isRayRef(ref string) bool {
	return strings.HasPrefix(ref, "RayJob/") || strings.HasPrefix(ref, "RayCluster/")
}

// lifecycle says how a run's state changes, "" when it does not (or the
// run is new or removed).
func lifecycle(o, c *RunFacts) string {
	before, after := stateOf(o), stateOf(c)
	switch {
	case before.state == runparams.Running && after.state == runparams.Stopped && !after.ray && !before.kueue:
		return "its RayJob or RayCluster is removed: the sync prunes it, which stops the run"
	case before.state == runparams.Running && after.state == runparams.Stopped:
		return "stopped by this change: KubeRay deletes its cluster (a Kueue run's RayJob is pruned), the object stays as its record"
	case before.state == runparams.Stopped && after.state == runparams.Running && (before.ray || after.kueue):
		// Only a Kueue run is stopped by leaving its Ray object out; a
		// render that never had one gains a new run, not a restart.
		return "started again by this change: KubeRay creates a new cluster from the spec as it is now and submits the job again (it resumes from its checkpoints if the recipe does)"
	}
	return ""
}

// startedEdits are the edits of a started run that would never reach it
// (never): per RayJob or RayCluster present on both sides, the changed
// fields KubeRay does not apply to a running object ("RayJob/x:
// spec.entrypoint"); and those that restart it (restarts): an object
// Kueue admitted whose pod sets (a pod template, a worker group's count)
// change no longer matches its admitted Workload, so Kueue suspends it
// and deletes the Workload (jobframework's "No matching Workload"), KubeRay
// deletes its cluster, and once a new Workload is admitted runs it again
// from the start, every edit of it included. None when the base render is
// stopped or this render stops the run.
func startedEdits(o, c *RunFacts) (never, restarts []string) {
	if stateOf(o).state != runparams.Running || stateOf(c).state != runparams.Running {
		return nil, nil
	}
	for ref, canon := range c.Objects {
		prev, ok := o.Objects[ref]
		if !ok || prev == canon || !isRayRef(ref) {
			continue
		}
		var before, after map[string]any
		if json.Unmarshal([]byte(prev), &before) != nil || json.Unmarshal([]byte(canon), &after) != nil {
			continue
		}
		queued := queueOf(before) != ""
		var paths []string
		switch {
		case strings.HasPrefix(ref, "RayCluster/") && !queued:
			paths = rayClusterEdits(before, after)
		case strings.HasPrefix(ref, "RayCluster/"):
			// Kueue's Workload holds the worker counts too: KubeRay's live
			// scaling is a pod set change Kueue restarts.
			changedPaths("spec", before["spec"], after["spec"], autoscalerBounds, 0, &paths)
		default:
			changedPaths("spec", before["spec"], after["spec"], nil, 0, &paths)
		}
		restart := false
		for _, p := range paths {
			restart = restart || queued && podSetPathRE().MatchString(p)
		}
		if queueOf(before) != queueOf(after) {
			paths = append(paths, "metadata.labels."+vocab.KueueQueueLabel+" (Kueue's webhook refuses it on a running job)")
		}
		if len(paths) == 0 {
			continue
		}
		sort.Strings(paths)
		if restart {
			restarts = append(restarts, ref+": "+strings.Join(paths, ", "))
		} else {
			never = append(never, ref+": "+strings.Join(paths, ", "))
		}
	}
	sort.Strings(never)
	sort.Strings(restarts)
	return never, restarts
}

// autoscalerBounds are the worker group fields KubeRay applies to a
// running cluster that Kueue's Workload does not hold.
var autoscalerBounds = map[string]bool{"minReplicas": true, "maxReplicas": true}

// podSetPathRE matches a changed path (changedPaths') of what Kueue's
// Workload holds of a RayJob or RayCluster and compares with the running
// object: its pod sets, the head's and each worker group's pod template,
// a group's name and count, and the submitter's template
// (jobframework.EquivalentToWorkload: counts and templates).
var podSetPathRE = lazyre.New(`^spec\.(rayClusterSpec\.)?(headGroupSpec(\.template.*)?|workerGroupSpecs(\[\d+\](\.(template|replicas|numOfHosts|groupName).*)?)?|submitterPodTemplate.*)$`)

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
	q, _ := labels[vocab.KueueQueueLabel].(string)
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

// StartedRestartRefusal is the gate's reason for refusing edits of a
// started Kueue run that restart it, saying what happens and the ways
// that do not lose the run's progress.
func StartedRestartRefusal(d RunDiff) string {
	return fmt.Sprintf("the run has started (the base branch runs it) and Kueue admitted it; this change edits what Kueue holds in its admitted Workload (pod counts, pod templates): %s; Kueue finds the running job no longer matches the Workload, suspends it and deletes the Workload, KubeRay deletes its cluster, and once a new Workload is admitted (after waiting in the queue again) KubeRay creates a new cluster and submits the job with a new Ray job id: a restart from step 0 (from its checkpoints only if the recipe resumes from them). Instead: stop it (spec.state: stopped) in this change and edit it with spec.state: run in the next, or leave it and add a new run under a new name",
		strings.Join(d.StartedRestarts, "; "))
}

// StartedRunRefusal is the gate's reason for refusing edits of a started
// run, naming them and the ways that take effect.
func StartedRunRefusal(d RunDiff) string {
	return fmt.Sprintf("the run has started (the base branch runs it) and this change edits what KubeRay or Kueue never apply to a running run: %s; the edit would merge and never reach it. Instead: stop it (spec.state: stopped) in this change and edit it with spec.state: run in the next (KubeRay starts it again from the edited spec), or leave it and add a new run under a new name",
		strings.Join(d.StartedEdits, "; "))
}
