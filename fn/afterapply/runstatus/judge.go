package runstatus

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// eventProblems keeps the Warning events about the run's objects, the
// newest per object and reason: FailedToCreate* from KubeRay, FailedCreate
// from a Deployment's ReplicaSet, FailedScheduling.
func eventProblems(events []unstructured.Unstructured, clusters map[string]bool, jobs []unstructured.Unstructured, pods map[string]bool) []Problem {
	jobNames := map[string]bool{}
	for i := range jobs {
		jobNames[jobs[i].GetName()] = true
	}
	type key struct{ obj, reason string }
	newest := map[key]corev1.Event{}
	for i := range events {
		var e corev1.Event
		if kube.Decode(&events[i], &e) != nil || e.Type != corev1.EventTypeWarning {
			continue
		}
		o := e.InvolvedObject
		ours := (o.Kind == "RayCluster" && clusters[o.Name]) || (o.Kind == "RayJob" && jobNames[o.Name]) || (o.Kind == "Pod" && pods[o.Name])
		if !ours {
			continue
		}
		k := key{o.Kind + "/" + o.Name, e.Reason}
		if prev, ok := newest[k]; !ok || eventTime(e).After(eventTime(prev)) {
			newest[k] = e
		}
	}
	out := make([]Problem, 0, len(newest))
	for k, e := range newest {
		out = append(out, Problem{Object: k.obj, Reason: e.Reason, Message: e.Message})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Object != out[j].Object {
			return out[i].Object < out[j].Object
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// podProblems names the pods whose wait will not end by itself, and
// failed pods.
func podProblems(pods []Pod) []Problem {
	var out []Problem
	for _, p := range pods {
		if p.Blocked {
			out = append(out, Problem{Object: "Pod/" + p.Name, Reason: "Pending", Message: p.Waiting})
		}
		if p.Phase == string(corev1.PodFailed) {
			out = append(out, Problem{Object: "Pod/" + p.Name, Reason: "Failed", Message: p.Waiting})
		}
	}
	return out
}

// judge turns the facts into a verdict and one line saying why.
func judge(r Report) (Verdict, string) {
	// A deletion outranks any status: KubeRay stops reconciling an object
	// being deleted, so a Running RayJob's status is stale.
	if v, s, ok := deleting(r); ok {
		return v, s
	}
	blocking := blockingProblems(r.Problems)
	for _, j := range r.RayJobs {
		switch rayv1.JobDeploymentStatus(j.JobDeploymentStatus) {
		case rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
			return Failed, fmt.Sprintf("RayJob %s failed: %s", j.Name, strings.TrimSpace(j.Reason+" "+j.Message))
		}
	}
	if v, s, ok := stopped(r); ok {
		return v, s
	}
	for _, j := range r.RayJobs {
		if j.JobDeploymentStatus == string(rayv1.JobDeploymentStatusComplete) {
			if j.JobStatus != "" && j.JobStatus != string(rayv1.JobStatusSucceeded) {
				return Failed, fmt.Sprintf("RayJob %s completed with job status %s", j.Name, j.JobStatus)
			}
			continue
		}
		switch rayv1.JobDeploymentStatus(j.JobDeploymentStatus) {
		case rayv1.JobDeploymentStatusSuspended, rayv1.JobDeploymentStatusSuspending:
			if a, ok := waiting(r.Admissions); ok {
				return Queued, fmt.Sprintf("RayJob %s is %s, held by its queue: %s", j.Name, j.JobDeploymentStatus, describeAdmission(a))
			}
			return Suspended, fmt.Sprintf("RayJob %s is %s", j.Name, j.JobDeploymentStatus)
		case rayv1.JobDeploymentStatusRunning:
			if len(blocking) > 0 {
				return Stuck, fmt.Sprintf("RayJob %s is Running but %s", j.Name, describe(blocking[0]))
			}
			return Running, fmt.Sprintf("RayJob %s is Running (job %s)", j.Name, orDash(j.JobStatus))
		}
		if len(blocking) > 0 {
			return Stuck, fmt.Sprintf("RayJob %s is %s: %s", j.Name, orDash(j.JobDeploymentStatus), describe(blocking[0]))
		}
		if a, ok := waiting(r.Admissions); ok {
			return Queued, fmt.Sprintf("RayJob %s is %s, held by its queue: %s", j.Name, orDash(j.JobDeploymentStatus), describeAdmission(a))
		}
		return Progressing, fmt.Sprintf("RayJob %s is %s; no obstacle found yet", j.Name, orDash(j.JobDeploymentStatus))
	}
	if len(r.RayJobs) > 0 {
		names := make([]string, 0, len(r.RayJobs))
		for _, j := range r.RayJobs {
			s := j.Name
			if j.Cleanup != "" {
				s += " (cleanup " + j.Cleanup + ")"
			}
			names = append(names, s)
		}
		return Succeeded, "RayJob " + strings.Join(names, ", ") + " succeeded"
	}
	if len(blocking) > 0 {
		return Stuck, describe(blocking[0])
	}
	ready := 0
	for _, c := range r.RayClusters {
		if c.State == string(rayv1.Ready) {
			ready++
		}
	}
	if len(r.RayClusters) > 0 && ready == len(r.RayClusters) {
		return Running, fmt.Sprintf("%d RayCluster(s) ready", ready)
	}
	if a, ok := waiting(r.Admissions); ok && len(r.RayClusters) > 0 {
		return Queued, fmt.Sprintf("%d of %d RayCluster(s) ready, held by a queue: %s", ready, len(r.RayClusters), describeAdmission(a))
	}
	if len(r.RayClusters) > 0 {
		return Progressing, fmt.Sprintf("%d of %d RayCluster(s) ready; no obstacle found yet", ready, len(r.RayClusters))
	}
	if len(r.Pods) == 0 && len(r.Deployments) == 0 {
		// No RayJob or RayCluster, and nothing runs: stopped from the spec
		// (runparams.StateFromSpec, present false), as a stopped Kueue run
		// renders without them; or deleted in part.
		var left []string
		for _, o := range r.Services {
			left = append(left, "Service/"+o.Name)
		}
		for _, o := range r.Others {
			left = append(left, o.Kind+"/"+o.Name)
		}
		for _, a := range r.Admissions {
			left = append(left, a.Kind+"/"+a.Name)
		}
		if specStopped(false, false, "") {
			return Stopped, fmt.Sprintf("no RayJob or RayCluster of the run, only %s: a stopped Kueue run renders without them (state: run in its entry starts it again); if the run was deleted, delete these with it (docs/run-identity.md)", strings.Join(left, ", "))
		}
	}
	return Progressing, "no RayJob or RayCluster of the run; other objects present"
}

// deleting is the verdict for a run a RayJob or RayCluster of which is
// being deleted: the first such object, and the finalizers it waits on.
func deleting(r Report) (Verdict, string, bool) {
	say := func(kind, name string, d Deletion) (Verdict, string, bool) {
		s := fmt.Sprintf("%s %s is being deleted", kind, name)
		if len(d.Finalizers) > 0 {
			s += fmt.Sprintf(" (waiting on finalizers %s)", strings.Join(d.Finalizers, ", "))
		}
		return Deleting, s, true
	}
	for _, j := range r.RayJobs {
		if j.Deleting {
			return say("RayJob", j.Name, j.Deletion)
		}
	}
	for _, c := range r.RayClusters {
		if c.Deleting {
			return say("RayCluster", c.Name, c.Deletion)
		}
	}
	return "", "", false
}

// besideProgress are the resources whose refusal (403) hides no step of
// the run's progress: where a queue holds it and the objects listed
// beside the run. Their refusal is a Problem line, not a cause of stuck.
var besideProgress = map[string]bool{"workloads": true, "podgroups": true, "computedomains": true, "resourceclaimtemplates": true, "configmaps": true}

// blockingProblems are the problems that stop a run from progressing, or
// hide whether it does (a refused read of its own kinds).
func blockingProblems(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if strings.HasPrefix(p.Reason, "FailedToCreate") || strings.HasPrefix(p.Reason, "FailedCreate") ||
			p.Reason == "FailedScheduling" || p.Reason == "Pending" || p.Reason == "Failed" || p.Reason == "Forbidden" && !besideProgress[p.Object] {
			out = append(out, p)
		}
	}
	return out
}

func describe(p Problem) string {
	return fmt.Sprintf("%s %s: %s", p.Object, p.Reason, p.Message)
}

func sortReport(r *Report) {
	sort.Slice(r.RayJobs, func(i, j int) bool { return r.RayJobs[i].Name < r.RayJobs[j].Name })
	sort.Slice(r.RayClusters, func(i, j int) bool { return r.RayClusters[i].Name < r.RayClusters[j].Name })
	sort.Slice(r.Pods, func(i, j int) bool { return r.Pods[i].Name < r.Pods[j].Name })
	sort.Slice(r.Services, func(i, j int) bool { return r.Services[i].Name < r.Services[j].Name })
	sort.Slice(r.Claims, func(i, j int) bool {
		if r.Claims[i].Pod != r.Claims[j].Pod {
			return r.Claims[i].Pod < r.Claims[j].Pod
		}
		return r.Claims[i].Name < r.Claims[j].Name
	})
	sort.Slice(r.Deployments, func(i, j int) bool { return r.Deployments[i].Name < r.Deployments[j].Name })
	sort.Slice(r.Others, func(i, j int) bool {
		if r.Others[i].Kind != r.Others[j].Kind {
			return r.Others[i].Kind < r.Others[j].Kind
		}
		return r.Others[i].Name < r.Others[j].Name
	})
}

// stopped is the verdict of a run its spec stops (a RayJob or RayCluster
// suspended without a Kueue queue: runparams.StateFromSpec, never the
// state annotation) that had not ended: it is neither queued nor merely
// suspended, and nothing will start it until its spec does. A RayJob that
// ended before the stop keeps its end verdict.
func stopped(r Report) (Verdict, string, bool) {
	var names []string
	pods := len(r.Pods)
	for _, j := range r.RayJobs {
		if !j.Stopped {
			continue
		}
		switch rayv1.JobDeploymentStatus(j.JobDeploymentStatus) {
		case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
			return "", "", false
		}
		names = append(names, "RayJob "+j.Name+" ("+orDash(j.JobDeploymentStatus)+")")
	}
	for _, c := range r.RayClusters {
		if c.Stopped {
			names = append(names, "RayCluster "+c.Name)
		}
	}
	if len(names) == 0 {
		return "", "", false
	}
	msg := "the run is stopped (suspended, no Kueue queue): " + strings.Join(names, ", ")
	switch {
	case r.podsUnread:
	case pods > 0:
		msg += fmt.Sprintf("; KubeRay is deleting its %d Pod(s)", pods)
	default:
		msg += "; no Pod runs"
	}
	return Stopped, msg + "; state: run in its entry starts it again", true
}

// specStopped is runparams.StateFromSpec's "stopped", the one rule.
func specStopped(present, suspended bool, kueueQueue string) bool {
	return runparams.StateFromSpec(present, suspended, kueueQueue) == runparams.Stopped
}
