package kai

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Queues are KAI's Queues.
var Queues = schema.GroupVersionResource{Group: vocab.KAIGroup, Version: vocab.KAIQueueVersion, Resource: "queues"}

// priorityClasses are the cluster's PriorityClasses: a KAI PodGroup's
// priority is the value of the one its spec.priorityClassName names.
var priorityClasses = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}

// trainClass is the class KAI's pod grouper gives a PodGroup whose
// pods and owner name none the cluster has (KAI-Scheduler d5bc503a
// pkg/podgrouper/podgrouper/plugins/constants: TrainPriorityClass).
const trainClass = "train"

// PreflightObject judges a found KAI Queue for the objects that name it:
// what the run needs of what KAI divides and how much is free, then what
// KAI does with it (Predict: admit it, reclaim from other queues, preempt
// in its own, or leave it pending), from the Queues, the PodGroups, the
// PriorityClasses, the Nodes and the bound Pods. A read that fails says
// what cannot be told; the line stays ok (the queue exists).
func (Integration) PreflightObject(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun, l scheduler.Line, _ *unstructured.Unstructured) (scheduler.Line, bool, error) {
	if l.Kind != "Queue" || l.APIVersion != vocab.KAIQueueAPIVersion {
		return l, false, nil
	}
	l.State = scheduler.OK
	need := FromList(scheduler.Demand(run.Pods, l.ReferencedBy))
	if need.GPU <= 0 && need.CPU <= 0 && need.Memory <= 0 {
		return l, true, nil
	}
	cl, why, err := clusterOf(ctx, r, run)
	if r.Stops(err) {
		return l, true, err
	}
	if why != "" {
		l.Detail = "cannot tell what KAI does with the run: " + why
		return l, true, nil
	}
	job := Job{Name: "the run", Queue: l.Name, Requested: need}
	job.Priority, job.Preemptible = runPriority(run.Pods, l, cl.classes)
	l.Detail = needs(need, cl.Total, cl.Free) + ": " + verdict(Predict(cl.Cluster, job), job)
	return l, true, nil
}

// needs is what the run needs of each resource KAI divides, and what
// of the cluster's is free, in the one wording of every quota line.
func needs(need, total, free Resources) string {
	var parts []string
	for _, r := range []struct {
		name           corev1.ResourceName
		need, tot, fre float64
		format         resource.Format
		scale          float64
	}{
		{corev1.ResourceCPU, need.CPU, total.CPU, free.CPU, resource.DecimalSI, 1000},
		{corev1.ResourceMemory, need.Memory, total.Memory, free.Memory, resource.BinarySI, 1},
		{GPU, need.GPU, total.GPU, free.GPU, resource.DecimalSI, 1},
	} {
		if r.need <= 0 {
			continue
		}
		q := func(v float64) string {
			v = min(max(v, 0), 1e15) // within int64 in milli-units
			if r.format == resource.BinarySI {
				return scheduler.Amount(*resource.NewQuantity(int64(v), r.format))
			}
			return scheduler.Amount(*resource.NewMilliQuantity(int64(v*1000/r.scale), r.format))
		}
		parts = append(parts, fmt.Sprintf("needs %s %s; %s of %s free", q(r.need), r.name, q(r.fre), q(r.tot)))
	}
	return strings.Join(parts, "; ")
}

// verdict words a prediction as Kueue's LocalQueue line does.
func verdict(p Prediction, run Job) string {
	switch {
	case len(p.Reclaim) > 0:
		byQueue := map[string][]Job{}
		for _, j := range p.Reclaim {
			byQueue[j.Queue] = append(byQueue[j.Queue], j)
		}
		var parts []string
		for _, q := range tree.SortedKeys(byQueue) {
			parts = append(parts, fmt.Sprintf("queue %s (%s)", q, jobNames(byQueue[q])))
		}
		return "admitted now by reclaiming from " + strings.Join(parts, ", ")
	case len(p.Preempt) > 0:
		return "admitted now by preempting " + jobNames(p.Preempt)
	case p.Admitted:
		return "admitted now"
	case p.Why != "":
		return fmt.Sprintf("pending while it is %s (priority %d)", p.Why, run.Priority)
	case len(p.Ahead) > 0:
		return "queued behind " + jobNames(p.Ahead)
	}
	return fmt.Sprintf("queued until running PodGroups finish (priority %d: nothing KAI may reclaim or preempt frees room)", run.Priority)
}

func jobNames(js []Job) string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = fmt.Sprintf("%s (priority %d)", j.Name, j.Priority)
	}
	return strings.Join(out, ", ")
}

// priorityLabel names a priority class on a pod (or its owner) for
// KAI's pod grouper, before the pod's spec.priorityClassName.
const priorityLabel = "priorityClassName"

// runPriority is the run's priority as KAI's pod grouper sets it
// (defaultgrouper calcPodGroupPriorityClass): the pods' priorityClassName
// label, else their spec.priorityClassName, a class the cluster lacks
// being train's; and its preemptibility.
func runPriority(pods []scheduler.PodSet, l scheduler.Line, classes map[string]int32) (int32, bool) {
	owners := map[string]bool{}
	for _, r := range l.ReferencedBy {
		owner, _, _ := strings.Cut(r, " ")
		owners[owner] = true
	}
	class := ""
	for _, ps := range pods {
		if owners[ps.Object] && class == "" {
			class = ps.Meta.Labels[priorityLabel]
			if class == "" {
				class = ps.Spec.PriorityClassName
			}
		}
	}
	v, ok := classes[class]
	if !ok {
		v, ok = classes[trainClass]
	}
	if !ok {
		v = DefaultPodGroupPriority
	}
	return v, Preemptible("", v)
}

// state is the cluster as the model reads it, with the
// PriorityClasses' values.
type state struct {
	Cluster
	classes map[string]int32
}

// clusterOf reads what KAI divides: the ready Nodes' allocatable less the
// bound pods of other schedulers (proportion.go getNodeResources), free
// what KAI's bound pods leave; the Queues; every PodGroup but the run's
// own (named as the run's namespace sees them) and the PriorityClasses.
// why names a read that failed.
func clusterOf(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun) (state, string, error) {
	st := state{classes: map[string]int32{}}
	pcs, out, err := r.List(ctx, priorityClasses, "", "")
	if out != scheduler.Found {
		return st, scheduler.ReadFailure("the PriorityClasses", out, err), err
	}
	for i := range pcs {
		if v, ok := scheduler.Int32Of(pcs[i].Object["value"]); ok {
			st.classes[pcs[i].GetName()] = v
		}
	}
	queues, out, err := r.List(ctx, Queues, "", "")
	if out != scheduler.Found {
		return st, scheduler.ReadFailure("the KAI Queues", out, err), err
	}
	for i := range queues {
		q, err := QueueOf(&queues[i])
		if err != nil {
			return st, err.Error(), nil
		}
		st.Queues = append(st.Queues, q)
	}
	pgs, out, err := r.List(ctx, PodGroups, "", "")
	if scheduler.Failed(out, err) {
		return st, scheduler.ReadFailure("the PodGroups", out, err), err
	}
	own := map[string]bool{}
	for _, ps := range run.Pods {
		own[ps.Namespace+"/"+ps.Object] = true
	}
	lookup := func(class string) (int32, bool) { v, ok := st.classes[class]; return v, ok }
	for i := range pgs {
		if owned(&pgs[i], own) {
			continue
		}
		j, err := JobOf(&pgs[i], run.Namespace, lookup)
		if err != nil {
			return st, err.Error(), nil
		}
		st.Jobs = append(st.Jobs, j)
	}
	why, err := room(ctx, r, &st.Cluster)
	return st, why, err
}

func owned(pg *unstructured.Unstructured, own map[string]bool) bool {
	for _, r := range pg.GetOwnerReferences() {
		if own[pg.GetNamespace()+"/"+r.Kind+"/"+r.Name] {
			return true
		}
	}
	return false
}

// room sets what KAI divides and what of it is free (BoundPods leaves
// out the run's own pods, a run already applied).
func room(ctx context.Context, r scheduler.Reader, cl *Cluster) (string, error) {
	nodes, out, err := r.Nodes(ctx)
	if out != scheduler.Found {
		return scheduler.ReadFailure("the Nodes", out, err), err
	}
	var ready []string
	for _, n := range nodes {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready = append(ready, n.Name)
				cl.Total = cl.Total.Add(FromList(n.Status.Allocatable))
			}
		}
	}
	bound, out, err := r.BoundPods(ctx)
	switch {
	case r.Stops(err):
		return "", err
	case out != scheduler.Found:
		return scheduler.ReadFailure("the bound Pods", out, err), nil
	case bound.More:
		return fmt.Sprintf("the bound Pods are more than %d", bound.Limit), nil
	}
	var used Resources
	for _, name := range slices.Compact(slices.Sorted(slices.Values(ready))) {
		for _, h := range bound.Holders(name) {
			req := FromList(bound.Held[name][h])
			if h.Scheduler == vocab.KAISchedulerName {
				used = used.Add(req)
			} else {
				cl.Total = cl.Total.Sub(req)
			}
		}
	}
	cl.Free = cl.Total.Sub(used)
	return "", nil
}

// PreflightAdmit: it admits no pod set (the pods go as rendered).
func (Integration) PreflightAdmit(_ context.Context, _ scheduler.Reader, run scheduler.PreflightRun) ([]scheduler.PodSet, error) {
	return run.Pods, nil
}
