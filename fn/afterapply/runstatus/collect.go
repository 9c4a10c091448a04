package runstatus

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Collect reads everything of the run: the objects labelled with it that
// it owns (owned.go). An error wrapping kube.ErrUnreachable means the
// cluster could not be asked; a permission error on one kind is a Problem,
// not an error.
func Collect(ctx context.Context, c *kube.Conn, namespace, run string, now time.Time) (Report, error) {
	r := Report{Run: run, Namespace: namespace, PodPhases: map[string]int{}}
	k := &collector{ctx: ctx, c: c.Budgeted(kube.MaxReportBytes), namespace: namespace, r: &r}
	sel := vocab.InstanceLabel + "=" + run
	o, err := k.owned(run, sel)
	if err != nil {
		return r, err
	}
	deploys, err := k.list(kube.Deployments, sel)
	if err != nil {
		return r, err
	}
	others, err := k.others(sel)
	if err != nil {
		return r, err
	}
	if len(o.jobs)+len(o.clusters)+len(o.pods)+len(o.services)+len(deploys)+len(others) == 0 {
		if len(k.refused) > 0 {
			// Nothing readable is not nothing there.
			return r, fmt.Errorf("%w: cannot tell whether run %s exists in namespace %s: the cluster refused to list %s (403 Forbidden)",
				kube.ErrAccess, run, namespace, strings.Join(k.refused, ", "))
		}
		r.Verdict = NotFound
		r.Summary = fmt.Sprintf("nothing labelled %s in namespace %s", sel, namespace)
		return r, nil
	}
	clusterNames, podNames := namesOf(o.clusters), namesOf(o.pods)
	events, err := k.events(o.jobs, clusterNames, podNames)
	if err != nil {
		return r, err
	}
	if err := k.addRay(o.jobs, o.clusters, o.jobCluster, now); err != nil {
		return r, err
	}
	if err := k.addPods(o.pods); err != nil {
		return r, err
	}
	if err := k.admissions(sel, append(slices.Clone(o.jobs), o.clusters...)); err != nil {
		return r, err
	}
	for i := range o.services {
		var s corev1.Service
		_ = kube.Decode(&o.services[i], &s)
		r.Services = append(r.Services, Object{Kind: "Service", Name: s.Name, Info: string(s.Spec.Type)})
	}
	for i := range deploys {
		d := Deployment{Name: deploys[i].GetName()}
		d.Ready = k.count("Deployment/"+d.Name, deploys[i].Object, "status", "readyReplicas")
		d.Desired = k.count("Deployment/"+d.Name, deploys[i].Object, "spec", "replicas")
		d.Available = d.Ready >= d.Desired && d.Desired > 0
		r.Deployments = append(r.Deployments, d)
	}
	r.Others = others
	r.Problems = append(r.Problems, eventProblems(events, clusterNames, o.jobs, podNames)...)
	r.Problems = append(r.Problems, podProblems(r.Pods)...)
	sortReport(&r)
	r.Verdict, r.Summary = judge(r)
	heldAfterEviction(&r, now)
	followDispatch(&r)
	return r, nil
}

// ownedObjects are the run's RayJobs, RayClusters, Pods and Services, and
// which RayJobs' clusters (status.rayClusterName) are their own.
type ownedObjects struct {
	jobs, clusters, pods, services []unstructured.Unstructured
	jobCluster                     map[string]bool
}

// owned lists the run's RayJobs, RayClusters, Pods and Services by its
// label and keeps what it owns; what it does not is a NotOwned Problem.
func (k *collector) owned(run, sel string) (ownedObjects, error) {
	o, err := k.ownedRay(run, sel)
	if err != nil {
		return o, err
	}
	if o.pods, err = k.ownedBy(kube.Pods, "Pod", run, sel, o.clusters); err != nil {
		return o, err
	}
	o.services, err = k.ownedBy(kube.Services, "Service", run, sel, o.clusters)
	return o, err
}

// ownedRay lists the run's RayJobs and the RayClusters it owns.
func (k *collector) ownedRay(run, sel string) (ownedObjects, error) {
	var o ownedObjects
	var err error
	if o.jobs, err = k.list(kube.RayJobs, sel); err != nil {
		return o, err
	}
	listed, err := k.list(kube.RayClusters, sel)
	if err != nil {
		return o, err
	}
	kept, ignored := ownedClusters(run, o.jobs, listed)
	k.r.Problems = append(k.r.Problems, ignored...)
	o.clusters, o.jobCluster, err = k.jobClusters(run, o.jobs, kept)
	return o, err
}

// ownedBy lists the Pods or Services labelled with the run, and those
// KubeRay labels with one of the run's RayClusters (ray.io/cluster, a
// set-based selector of at most maxSelectorValues names per list), and
// keeps those the run owns (ownedByClusters).
func (k *collector) ownedBy(gvr schema.GroupVersionResource, kind, run, sel string, clusters []unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	labelled, err := k.list(gvr, sel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(namesOf(clusters))) {
		if len(validation.IsValidLabelValue(name)) == 0 { // no label carries another: a selector of it would select something else
			names = append(names, name)
		}
	}
	var byCluster []unstructured.Unstructured
	for chunk := range slices.Chunk(names, maxSelectorValues) {
		items, err := k.list(gvr, vocab.RayClusterLabel+" in ("+strings.Join(chunk, ",")+")")
		if err != nil {
			return nil, err
		}
		byCluster = append(byCluster, items...)
	}
	kept, ignored := ownedByClusters(kind, run, labelled, byCluster, clusters)
	k.r.Problems = append(k.r.Problems, ignored...)
	return kept, nil
}

// maxSelectorValues is how many values one set-based selector names: a
// request per cluster would read the namespace's pods once per cluster
// from a server that ignores the selector.
const maxSelectorValues = 100

func namesOf(items []unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for i := range items {
		out[items[i].GetName()] = true
	}
	return out
}

// collector reads one run's objects from one namespace into a Report.
type collector struct {
	ctx       context.Context
	c         *kube.Conn
	namespace string
	r         *Report
	// refused are the resources the user may not list.
	refused []string
}

// list lists one kind; a kind the user may not list is a Problem and an
// empty list.
func (k *collector) list(gvr schema.GroupVersionResource, selector string) ([]unstructured.Unstructured, error) {
	items, out, err := k.c.List(k.ctx, gvr, k.namespace, selector)
	if kube.Stops(err) {
		// 401 refuses every read alike: nothing after it can be judged.
		return nil, err
	}
	if out == kube.Forbidden {
		k.refuse(gvr, err)
	}
	return items, nil
}

// refuse records a list RBAC refused (403): judged per resource, so a
// refusal of one API group (Kueue's, KAI's) among readable ones is a
// Problem line, never a silent "nothing there".
func (k *collector) refuse(gvr schema.GroupVersionResource, err error) {
	if !slices.Contains(k.refused, gvr.Resource) {
		k.refused = append(k.refused, gvr.Resource)
	}
	k.r.Problems = append(k.r.Problems, Problem{Object: gvr.Resource, Reason: "Forbidden", Message: "cannot list " + gvr.Resource + ": " + err.Error()})
}

// maxEventsPerObject bounds the Events read about one object: the newest
// hundreds say why it is stuck as well as all of them would.
const maxEventsPerObject = 500

// events reads the Events about the run's RayJobs, RayClusters and Pods,
// each object's by its involvedObject.name (the server filters; a
// namespace of 200,000 Events is never listed whole), at most
// maxEventsPerObject each.
func (k *collector) events(jobs []unstructured.Unstructured, clusterNames, podNames map[string]bool) ([]unstructured.Unstructured, error) {
	names := map[string]bool{}
	for i := range jobs {
		names[jobs[i].GetName()] = true
	}
	maps.Copy(names, clusterNames)
	maps.Copy(names, podNames)
	var out []unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(names)) {
		items, more, res, err := k.c.ListSome(k.ctx, kube.Events, k.namespace, kube.ListOptions{FieldSelector: "involvedObject.name=" + name, Max: maxEventsPerObject})
		if kube.Stops(err) {
			return nil, err
		}
		if res == kube.Forbidden {
			k.r.Problems = append(k.r.Problems, Problem{Object: "events", Reason: "Forbidden", Message: "cannot list events: " + err.Error()})
			return nil, nil
		}
		if more {
			k.r.Problems = append(k.r.Problems, Problem{Object: name, Reason: "ManyEvents", Message: fmt.Sprintf("more than %d Events about it; the first %d were read", maxEventsPerObject, maxEventsPerObject)})
		}
		out = append(out, items...)
	}
	return out, nil
}

// others are the run's DRA objects and ConfigMaps, by kind and name.
func (k *collector) others(sel string) ([]Object, error) {
	var out []Object
	for _, o := range []struct {
		kind string
		gvr  schema.GroupVersionResource
	}{{"ComputeDomain", kube.ComputeDomains}, {"ResourceClaimTemplate", kube.ClaimTemplates}, {"ConfigMap", kube.ConfigMaps}} {
		items, err := k.list(o.gvr, sel) // an API not served holds nothing
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, Object{Kind: o.kind, Name: it.GetName()})
		}
	}
	return out, nil
}

// addRay adds the RayJobs and RayClusters to the report.
func (k *collector) addRay(jobs, clusters []unstructured.Unstructured, jobCluster map[string]bool, now time.Time) error {
	for i := range jobs {
		var j rayv1.RayJob
		_ = kube.Decode(&jobs[i], &j) // decoded by jobClusters
		k.r.RayJobs = append(k.r.RayJobs, rayJob(&j, jobCluster[j.Name], now))
	}
	for i := range clusters {
		var rc rayv1.RayCluster
		if err := kube.Decode(&clusters[i], &rc); err != nil {
			return fmt.Errorf("RayCluster %s: %w", clusters[i].GetName(), err)
		}
		out := rayCluster(&rc)
		object := "RayCluster/" + rc.Name
		// int32 fields: decoding refused what is over math.MaxInt32.
		for _, c := range []struct {
			field string
			n     *int32
		}{{"status.readyWorkerReplicas", &out.ReadyWorkers}, {"status.desiredWorkerReplicas", &out.DesiredWorker}} {
			if *c.n < 0 {
				k.invalidCount(object, c.field, fmt.Sprint(*c.n))
				*c.n = 0
			}
		}
		k.r.RayClusters = append(k.r.RayClusters, out)
	}
	return nil
}

// addPods adds the pods, their claims, and a pending pod's unallocated
// claim as what it waits for.
func (k *collector) addPods(pods []unstructured.Unstructured) error {
	for i := range pods {
		var p corev1.Pod
		if err := kube.Decode(&pods[i], &p); err != nil {
			return fmt.Errorf("Pod %s: %w", pods[i].GetName(), err)
		}
		pod := podOf(&p)
		k.r.PodPhases[pod.Phase]++
		claims, err := podClaims(k.ctx, k.c, &p)
		if err != nil {
			return err
		}
		for _, cl := range claims {
			k.r.Claims = append(k.r.Claims, cl)
			if !cl.Allocated && p.Status.Phase == corev1.PodPending && pod.Waiting == "" {
				pod.Waiting = "ResourceClaim " + cl.Name + " not allocated"
			}
		}
		k.r.Pods = append(k.r.Pods, pod)
	}
	return nil
}

// rayJob is a RayJob's state; ownCluster says the cluster its status
// names exists and is its own.
func rayJob(j *rayv1.RayJob, ownCluster bool, now time.Time) RayJob {
	out := RayJob{
		Name:                j.Name,
		JobDeploymentStatus: string(j.Status.JobDeploymentStatus),
		JobStatus:           string(j.Status.JobStatus),
		Reason:              string(j.Status.Reason),
		Message:             j.Status.Message,
		RayClusterName:      j.Status.RayClusterName,
		Stopped:             specStopped(true, j.Spec.Suspend, j.Labels[vocab.KueueQueueLabel]),
		Deletion:            deletionOf(j.ObjectMeta),
	}
	if len(j.Spec.ClusterSelector) > 0 {
		out.ClusterSelector = selectorText(j.Spec.ClusterSelector)
	}
	if j.Spec.ManagedBy != nil {
		out.ManagedBy = *j.Spec.ManagedBy
	}
	finished := j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete || j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	if finished && j.Spec.ShutdownAfterJobFinishes && len(j.Spec.ClusterSelector) == 0 {
		switch {
		case !ownCluster:
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

		ReadyWorkers: rc.Status.ReadyWorkerReplicas, DesiredWorker: rc.Status.DesiredWorkerReplicas, Deletion: deletionOf(rc.ObjectMeta),
		Stopped: specStopped(true, rc.Spec.Suspend != nil && *rc.Spec.Suspend, rc.Labels[vocab.KueueQueueLabel])}
	if rc.Labels[vocab.RayOriginatedFromCRDLabel] == "RayJob" {
		out.CreatedBy = "RayJob/" + rc.Labels[vocab.RayOriginatedFromCRNameLabel]
	}
	for _, c := range rc.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

func podOf(p *corev1.Pod) Pod {
	out := Pod{Name: p.Name, Cluster: p.Labels[vocab.RayClusterLabel], NodeType: p.Labels[vocab.RayNodeTypeLabel],
		Group: p.Labels[vocab.RayGroupLabel], Phase: string(p.Status.Phase)}
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
		if kube.Stops(err) {
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

// count reads a count of the server's at path (absent: 0); one that is
// not a whole number from 0 to math.MaxInt32 (the API's replica type) is a
// Problem naming it, and counts as 0.
func (k *collector) count(object string, obj map[string]any, path ...string) int64 {
	field := strings.Join(path, ".")
	v, found, _ := unstructured.NestedFieldNoCopy(obj, path...)
	switch t := v.(type) {
	case int64:
		return k.checkCount(object, field, t)
	case float64:
		if t == math.Trunc(t) && t >= 0 && t <= math.MaxInt32 {
			return int64(t)
		}
		k.invalidCount(object, field, fmt.Sprint(t))
	default:
		if found {
			k.invalidCount(object, field, fmt.Sprintf("a %T", v))
		}
	}
	return 0
}

// checkCount keeps a count from 0 to math.MaxInt32, else names it and
// counts 0: "workers ready -3/2" would be printed as the run's state.
func (k *collector) checkCount(object, field string, v int64) int64 {
	if v < 0 || v > math.MaxInt32 {
		k.invalidCount(object, field, fmt.Sprint(v))
		return 0
	}
	return v
}

func (k *collector) invalidCount(object, field, shown string) {
	k.r.Problems = append(k.r.Problems, Problem{Object: object, Reason: "InvalidCount",
		Message: fmt.Sprintf("%s is %s: expected a count from 0 to %d; counted as 0", field, shown, math.MaxInt32)})
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
