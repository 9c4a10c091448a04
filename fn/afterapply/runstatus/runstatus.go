// Package runstatus explains a run on a live cluster, read-only: every
// object of the run found by its app.kubernetes.io/instance label (which
// KubeRay copies from a RayJob onto the RayCluster it creates and onto the
// Pods), the RayClusters and Pods KubeRay made, and the reason a run that is
// not progressing is stuck. KubeRay leaves that reason only in Events on the
// RayCluster (FailedToCreateWorkerPod: Pod Security, a missing
// ServiceAccount) and in Pod conditions (Unschedulable), never in the
// RayJob's status; this is where a user finds it.
//
// The label is the run's identity (docs/run-identity.md): it is the same on
// runs applied by kubectl, kustomize, kpt and Helm. app.kubernetes.io/managed-by
// is not (Helm rewrites it), so it is never used to find objects.
package runstatus

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

// InstanceLabel is the run's identity label.
const InstanceLabel = "app.kubernetes.io/instance"

// Verdict is the run's state in one word.
type Verdict string

const (
	Running     Verdict = "running"     // the job runs, or the clusters are ready
	Succeeded   Verdict = "succeeded"   // the RayJob completed
	Progressing Verdict = "progressing" // starting, no known obstacle
	Suspended   Verdict = "suspended"
	Stuck       Verdict = "stuck"  // not progressing, with a known cause
	Failed      Verdict = "failed" // the RayJob failed
	NotFound    Verdict = "not found"
)

// Exit codes a script can use.
const (
	ExitOK       = 0 // running, succeeded, progressing or suspended
	ExitProblem  = 1 // failed, or stuck with a known cause
	ExitNotFound = 3 // nothing of the run in the namespace
)

// Exit is the verdict's exit code.
func (v Verdict) Exit() int {
	switch v {
	case Stuck, Failed:
		return ExitProblem
	case NotFound:
		return ExitNotFound
	}
	return ExitOK
}

// Report is what status prints.
type Report struct {
	Run         string       `json:"run"`
	Namespace   string       `json:"namespace"`
	Verdict     Verdict      `json:"verdict"`
	Summary     string       `json:"summary"`
	RayJobs     []RayJob     `json:"rayJobs,omitempty"`
	RayClusters []RayCluster `json:"rayClusters,omitempty"`
	Pods        []Pod        `json:"pods,omitempty"`
	// PodPhases counts the run's Pods by phase.
	PodPhases   map[string]int `json:"podPhases,omitempty"`
	Services    []Object       `json:"services,omitempty"`
	Claims      []Claim        `json:"resourceClaims,omitempty"`
	Deployments []Deployment   `json:"deployments,omitempty"`
	Others      []Object       `json:"otherObjects,omitempty"`
	// Problems are the causes found, newest last.
	Problems []Problem `json:"problems,omitempty"`
}

// RayJob is a RayJob's state.
type RayJob struct {
	Name                string `json:"name"`
	JobDeploymentStatus string `json:"jobDeploymentStatus"`
	JobStatus           string `json:"jobStatus,omitempty"`
	Reason              string `json:"reason,omitempty"`
	Message             string `json:"message,omitempty"`
	RayClusterName      string `json:"rayClusterName,omitempty"`
	ClusterSelector     string `json:"clusterSelector,omitempty"`
	// Cleanup, for a finished RayJob that shuts its cluster down: "done"
	// (the RayCluster is gone), "pending" (within ttlSecondsAfterFinished)
	// or "overdue".
	Cleanup string `json:"cleanup,omitempty"`
}

// RayCluster is a RayCluster's state.
type RayCluster struct {
	Name          string      `json:"name"`
	State         string      `json:"state,omitempty"`
	Reason        string      `json:"reason,omitempty"`
	ReadyWorkers  int32       `json:"readyWorkers"`
	DesiredWorker int32       `json:"desiredWorkers"`
	Conditions    []Condition `json:"conditions,omitempty"`
	// CreatedBy is the RayJob that created the cluster, if any.
	CreatedBy string `json:"createdBy,omitempty"`
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Pod is one Pod of the run.
type Pod struct {
	Name     string `json:"name"`
	Cluster  string `json:"cluster,omitempty"`
	NodeType string `json:"nodeType,omitempty"`
	Group    string `json:"group,omitempty"`
	Phase    string `json:"phase"`
	Ready    bool   `json:"ready"`
	// Waiting says why a Pending pod waits, when the API shows it.
	Waiting string `json:"waiting,omitempty"`
	// Blocked: the wait will not end by itself (the scheduler found no
	// node, an image cannot be pulled, a container keeps crashing). A
	// claim not yet allocated is a normal step of starting, not a block.
	Blocked bool `json:"blocked,omitempty"`
}

// blockingWaits are container waiting reasons that need someone to act.
var blockingWaits = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CrashLoopBackOff": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// Claim is a DRA ResourceClaim of the run's Pods.
type Claim struct {
	Name      string `json:"name"`
	Pod       string `json:"pod"`
	Allocated bool   `json:"allocated"`
}

// Deployment is a Deployment of the run.
type Deployment struct {
	Name      string `json:"name"`
	Ready     int64  `json:"readyReplicas"`
	Desired   int64  `json:"replicas"`
	Available bool   `json:"available"`
}

// Object is any other object of the run.
type Object struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Info string `json:"info,omitempty"`
}

// Problem is one known cause.
type Problem struct {
	Object  string `json:"object"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Collect reads everything of the run. An error wrapping
// kube.ErrUnreachable means the cluster could not be asked; a permission
// error on one kind is a Problem, not an error.
func Collect(ctx context.Context, c *kube.Conn, namespace, run string, now time.Time) (Report, error) {
	r := Report{Run: run, Namespace: namespace, PodPhases: map[string]int{}}
	sel := InstanceLabel + "=" + run
	list := func(gvr schema.GroupVersionResource, selector string) ([]unstructured.Unstructured, error) {
		items, out, err := c.List(ctx, gvr, namespace, selector)
		if errors.Is(err, kube.ErrUnreachable) {
			return nil, err
		}
		if out == kube.Forbidden {
			r.Problems = append(r.Problems, Problem{Object: gvr.Resource, Reason: "Forbidden", Message: "cannot list " + gvr.Resource + ": " + err.Error()})
		}
		return items, nil
	}
	jobs, err := list(kube.RayJobs, sel)
	if err != nil {
		return r, err
	}
	clusters, err := list(kube.RayClusters, sel)
	if err != nil {
		return r, err
	}
	clusterNames := map[string]bool{}
	for i := range clusters {
		clusterNames[clusters[i].GetName()] = true
	}
	// A RayJob's cluster normally carries the run's label (KubeRay copies
	// the RayJob's labels); read it by name too in case a user's RayJob did
	// not pass them on.
	for i := range jobs {
		var j rayv1.RayJob
		if err := kube.Decode(&jobs[i], &j); err != nil {
			return r, fmt.Errorf("RayJob %s: %w", jobs[i].GetName(), err)
		}
		name := j.Status.RayClusterName
		if name == "" || clusterNames[name] {
			continue
		}
		u, out, err := c.Get(ctx, kube.RayClusters, namespace, name)
		if errors.Is(err, kube.ErrUnreachable) {
			return r, err
		}
		if out == kube.Found {
			clusters = append(clusters, *u)
			clusterNames[name] = true
		}
	}
	pods, err := list(kube.Pods, sel)
	if err != nil {
		return r, err
	}
	podNames := map[string]bool{}
	for i := range pods {
		podNames[pods[i].GetName()] = true
	}
	for name := range clusterNames {
		more, err := list(kube.Pods, "ray.io/cluster="+name)
		if err != nil {
			return r, err
		}
		for _, p := range more {
			if !podNames[p.GetName()] {
				pods = append(pods, p)
				podNames[p.GetName()] = true
			}
		}
	}
	services, err := list(kube.Services, sel)
	if err != nil {
		return r, err
	}
	svcNames := map[string]bool{}
	for i := range services {
		svcNames[services[i].GetName()] = true
	}
	for name := range clusterNames {
		more, err := list(kube.Services, "ray.io/cluster="+name)
		if err != nil {
			return r, err
		}
		for _, s := range more {
			if !svcNames[s.GetName()] {
				services = append(services, s)
				svcNames[s.GetName()] = true
			}
		}
	}
	deploys, err := list(kube.Deployments, sel)
	if err != nil {
		return r, err
	}
	var others []Object
	for _, k := range []struct {
		kind string
		gvr  schema.GroupVersionResource
	}{{"ComputeDomain", kube.ComputeDomains}, {"ResourceClaimTemplate", kube.ClaimTemplates}, {"ConfigMap", kube.ConfigMaps}} {
		items, out, err := c.List(ctx, k.gvr, namespace, sel)
		if errors.Is(err, kube.ErrUnreachable) {
			return r, err
		}
		if out != kube.Found {
			continue // an API not served or not readable holds nothing we can show
		}
		for _, it := range items {
			others = append(others, Object{Kind: k.kind, Name: it.GetName()})
		}
	}
	events, err := list(kube.Events, "")
	if err != nil {
		return r, err
	}

	if len(jobs)+len(clusters)+len(pods)+len(services)+len(deploys)+len(others) == 0 {
		r.Verdict = NotFound
		r.Summary = fmt.Sprintf("nothing labelled %s in namespace %s", sel, namespace)
		return r, nil
	}
	for i := range jobs {
		var j rayv1.RayJob
		_ = kube.Decode(&jobs[i], &j) // decoded above
		r.RayJobs = append(r.RayJobs, rayJob(&j, clusterNames, now))
	}
	for i := range clusters {
		var rc rayv1.RayCluster
		if err := kube.Decode(&clusters[i], &rc); err != nil {
			return r, fmt.Errorf("RayCluster %s: %w", clusters[i].GetName(), err)
		}
		r.RayClusters = append(r.RayClusters, rayCluster(&rc))
	}
	for i := range pods {
		var p corev1.Pod
		if err := kube.Decode(&pods[i], &p); err != nil {
			return r, fmt.Errorf("Pod %s: %w", pods[i].GetName(), err)
		}
		pod := podOf(&p)
		r.PodPhases[pod.Phase]++
		claims, err := podClaims(ctx, c, &p)
		if err != nil {
			return r, err
		}
		for _, cl := range claims {
			r.Claims = append(r.Claims, cl)
			if !cl.Allocated && p.Status.Phase == corev1.PodPending && pod.Waiting == "" {
				pod.Waiting = "ResourceClaim " + cl.Name + " not allocated"
			}
		}
		r.Pods = append(r.Pods, pod)
	}
	for i := range services {
		var s corev1.Service
		_ = kube.Decode(&services[i], &s)
		r.Services = append(r.Services, Object{Kind: "Service", Name: s.Name, Info: string(s.Spec.Type)})
	}
	for i := range deploys {
		d := Deployment{Name: deploys[i].GetName()}
		d.Ready = nested(deploys[i].Object, "status", "readyReplicas")
		d.Desired = nested(deploys[i].Object, "spec", "replicas")
		d.Available = d.Ready >= d.Desired && d.Desired > 0
		r.Deployments = append(r.Deployments, d)
	}
	r.Others = others
	r.Problems = append(r.Problems, eventProblems(events, clusterNames, jobs, podNames)...)
	r.Problems = append(r.Problems, podProblems(r.Pods)...)
	sortReport(&r)
	r.Verdict, r.Summary = judge(r)
	return r, nil
}

func rayJob(j *rayv1.RayJob, clusters map[string]bool, now time.Time) RayJob {
	out := RayJob{
		Name:                j.Name,
		JobDeploymentStatus: string(j.Status.JobDeploymentStatus),
		JobStatus:           string(j.Status.JobStatus),
		Reason:              string(j.Status.Reason),
		Message:             j.Status.Message,
		RayClusterName:      j.Status.RayClusterName,
	}
	if len(j.Spec.ClusterSelector) > 0 {
		out.ClusterSelector = selectorText(j.Spec.ClusterSelector)
	}
	finished := j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete || j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	if finished && j.Spec.ShutdownAfterJobFinishes && len(j.Spec.ClusterSelector) == 0 {
		switch {
		case j.Status.RayClusterName == "" || !clusters[j.Status.RayClusterName]:
			out.Cleanup = "done"
		case j.Status.EndTime != nil && now.Sub(j.Status.EndTime.Time) > time.Duration(j.Spec.TTLSecondsAfterFinished)*time.Second+time.Minute:
			out.Cleanup = "overdue"
		default:
			out.Cleanup = "pending"
		}
	}
	return out
}

func rayCluster(rc *rayv1.RayCluster) RayCluster {
	// State is deprecated in favour of the conditions, which are listed
	// too; KubeRay v1.5.0 still writes it, and it is the STATUS column of
	// `kubectl get raycluster` that users compare with.
	out := RayCluster{Name: rc.Name, State: string(rc.Status.State), Reason: rc.Status.Reason, //nolint:staticcheck // see above

		ReadyWorkers: rc.Status.ReadyWorkerReplicas, DesiredWorker: rc.Status.DesiredWorkerReplicas}
	if rc.Labels["ray.io/originated-from-crd"] == "RayJob" {
		out.CreatedBy = "RayJob/" + rc.Labels["ray.io/originated-from-cr-name"]
	}
	for _, c := range rc.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

func podOf(p *corev1.Pod) Pod {
	out := Pod{Name: p.Name, Cluster: p.Labels["ray.io/cluster"], NodeType: p.Labels["ray.io/node-type"],
		Group: p.Labels["ray.io/group"], Phase: string(p.Status.Phase)}
	if out.Phase == "" {
		out.Phase = string(corev1.PodPending)
	}
	for _, c := range p.Status.Conditions {
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			out.Ready = true
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse:
			out.Waiting = strings.TrimSpace(c.Reason + ": " + c.Message)
			out.Blocked = c.Reason == corev1.PodReasonUnschedulable
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" && w.Reason != "ContainerCreating" && out.Waiting == "" {
			out.Waiting = strings.TrimSpace(cs.Name + ": " + w.Reason + ": " + w.Message)
			out.Blocked = blockingWaits[w.Reason]
		}
	}
	return out
}

// podClaims reads the ResourceClaims a Pod's claims resolved to
// (status.resourceClaimStatuses) and whether each is allocated. A claim
// the API has not created yet is reported unallocated.
func podClaims(ctx context.Context, c *kube.Conn, p *corev1.Pod) ([]Claim, error) {
	var out []Claim
	generated := map[string]string{}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	for _, rc := range p.Spec.ResourceClaims {
		name := generated[rc.Name]
		if rc.ResourceClaimName != nil {
			name = *rc.ResourceClaimName
		}
		if name == "" {
			out = append(out, Claim{Name: rc.Name + " (not created yet)", Pod: p.Name})
			continue
		}
		u, o, err := c.Get(ctx, kube.ResourceClaims, p.Namespace, name)
		if errors.Is(err, kube.ErrUnreachable) {
			return nil, err
		}
		cl := Claim{Name: name, Pod: p.Name}
		if o == kube.Found {
			_, cl.Allocated = nestedMap(u.Object, "status", "allocation")
		}
		out = append(out, cl)
	}
	return out, nil
}

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
	blocking := blockingProblems(r.Problems)
	for _, j := range r.RayJobs {
		switch rayv1.JobDeploymentStatus(j.JobDeploymentStatus) {
		case rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
			return Failed, fmt.Sprintf("RayJob %s failed: %s", j.Name, strings.TrimSpace(j.Reason+" "+j.Message))
		}
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
	if len(r.RayClusters) > 0 {
		return Progressing, fmt.Sprintf("%d of %d RayCluster(s) ready; no obstacle found yet", ready, len(r.RayClusters))
	}
	return Progressing, "no RayJob or RayCluster of the run; other objects present"
}

// blockingProblems are the problems that stop a run from progressing.
func blockingProblems(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if strings.HasPrefix(p.Reason, "FailedToCreate") || strings.HasPrefix(p.Reason, "FailedCreate") ||
			p.Reason == "FailedScheduling" || p.Reason == "Pending" || p.Reason == "Failed" || p.Reason == "Forbidden" {
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

func selectorText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

func nested(obj map[string]any, path ...string) int64 {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func nestedMap(obj map[string]any, path ...string) (map[string]any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[p]
	}
	m, ok := cur.(map[string]any)
	return m, ok && m != nil
}

func orDash(s string) string {
	if s == "" {
		return "New"
	}
	return s
}
