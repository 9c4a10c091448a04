package preflight

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	schedkai "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// priorityClasses are the cluster's PriorityClasses: a KAI PodGroup's
// priority is the value of the one its spec.priorityClassName names.
var priorityClasses = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}

// kaiTrainClass is the class KAI's pod grouper gives a PodGroup whose
// pods and owner name none the cluster has (KAI-Scheduler d5bc503a
// pkg/podgrouper/podgrouper/plugins/constants: TrainPriorityClass).
const kaiTrainClass = "train"

// kaiQueueLine judges a found KAI Queue for the objects that name it: what
// the run needs of what KAI divides and how much is free, then what KAI
// does with it (schedkai.Predict: admit it, reclaim from other queues,
// preempt in its own, or leave it pending), from the Queues, the
// PodGroups, the PriorityClasses, the Nodes and the bound Pods. A read
// that fails says what cannot be told; the line stays ok (the queue
// exists).
func kaiQueueLine(ctx context.Context, c *kube.Conn, in Input, l Line, k *cache) (Line, error) {
	l.State = OK
	need := schedkai.FromList(scheduler.Demand(in.Pods, l.ReferencedBy))
	if need.GPU <= 0 && need.CPU <= 0 && need.Memory <= 0 {
		return l, nil
	}
	cl, why, err := kaiCluster(ctx, c, in, k)
	if kube.Stops(err) {
		return l, err
	}
	if why != "" {
		l.Detail = "cannot tell what KAI does with the run: " + why
		return l, nil
	}
	run := schedkai.Job{Name: "the run", Queue: l.Name, Requested: need}
	run.Priority, run.Preemptible = kaiRunPriority(in, l, cl.classes)
	l.Detail = kaiNeeds(need, cl.Total, cl.Free) + ": " + kaiVerdict(schedkai.Predict(cl.Cluster, run), run)
	return l, nil
}

// kaiNeeds is what the run needs of each resource KAI divides, and what
// of the cluster's is free, in the one wording of every quota line.
func kaiNeeds(need, total, free schedkai.Resources) string {
	var parts []string
	for _, r := range []struct {
		name           corev1.ResourceName
		need, tot, fre float64
		format         resource.Format
		scale          float64
	}{
		{corev1.ResourceCPU, need.CPU, total.CPU, free.CPU, resource.DecimalSI, 1000},
		{corev1.ResourceMemory, need.Memory, total.Memory, free.Memory, resource.BinarySI, 1},
		{schedkai.GPU, need.GPU, total.GPU, free.GPU, resource.DecimalSI, 1},
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

// kaiVerdict words a prediction as Kueue's LocalQueue line does.
func kaiVerdict(p schedkai.Prediction, run schedkai.Job) string {
	switch {
	case len(p.Reclaim) > 0:
		byQueue := map[string][]schedkai.Job{}
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

func jobNames(js []schedkai.Job) string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = fmt.Sprintf("%s (priority %d)", j.Name, j.Priority)
	}
	return strings.Join(out, ", ")
}

// kaiPriorityLabel names a priority class on a pod (or its owner) for
// KAI's pod grouper, before the pod's spec.priorityClassName.
const kaiPriorityLabel = "priorityClassName"

// kaiRunPriority is the run's priority as KAI's pod grouper sets it
// (defaultgrouper calcPodGroupPriorityClass): the pods' priorityClassName
// label, else their spec.priorityClassName, a class the cluster lacks
// being train's; and its preemptibility.
func kaiRunPriority(in Input, l Line, classes map[string]int32) (int32, bool) {
	owners := map[string]bool{}
	for _, r := range l.ReferencedBy {
		owner, _, _ := strings.Cut(r, " ")
		owners[owner] = true
	}
	class := ""
	for _, ps := range in.Pods {
		if owners[ps.Object] && class == "" {
			class = ps.Meta.Labels[kaiPriorityLabel]
			if class == "" {
				class = ps.Spec.PriorityClassName
			}
		}
	}
	v, ok := classes[class]
	if !ok {
		v, ok = classes[kaiTrainClass]
	}
	if !ok {
		v = schedkai.DefaultPodGroupPriority
	}
	return v, schedkai.Preemptible("", v)
}

// kaiState is the cluster as the model reads it, with the
// PriorityClasses' values.
type kaiState struct {
	schedkai.Cluster
	classes map[string]int32
}

// kaiCluster reads what KAI divides: the ready Nodes' allocatable less the
// bound pods of other schedulers (proportion.go getNodeResources), free
// what KAI's bound pods leave; the Queues; every PodGroup but the input's
// own (named as the input's namespace sees them) and the PriorityClasses.
// why names a read that failed.
func kaiCluster(ctx context.Context, c *kube.Conn, in Input, k *cache) (kaiState, string, error) {
	st := kaiState{classes: map[string]int32{}}
	pcs, out, err := c.List(ctx, priorityClasses, "", "")
	if out != kube.Found {
		return st, readFailure("the PriorityClasses", out, err), err
	}
	for i := range pcs {
		if v, ok := scheduler.Int32Of(pcs[i].Object["value"]); ok {
			st.classes[pcs[i].GetName()] = v
		}
	}
	queues, out, err := c.List(ctx, kube.KAIQueues, "", "")
	if out != kube.Found {
		return st, readFailure("the KAI Queues", out, err), err
	}
	for i := range queues {
		q, err := schedkai.QueueOf(&queues[i])
		if err != nil {
			return st, err.Error(), nil
		}
		st.Queues = append(st.Queues, q)
	}
	pgs, out, err := c.List(ctx, schedkai.PodGroups, "", "")
	if failed(out, err) {
		return st, readFailure("the PodGroups", out, err), err
	}
	own := map[string]bool{}
	for _, ps := range in.Pods {
		own[ps.Namespace+"/"+ps.Object] = true
	}
	lookup := func(class string) (int32, bool) { v, ok := st.classes[class]; return v, ok }
	ns := orFirst("", in.Spaces)
	for i := range pgs {
		if kaiOwned(&pgs[i], own) {
			continue
		}
		j, err := schedkai.JobOf(&pgs[i], ns, lookup)
		if err != nil {
			return st, err.Error(), nil
		}
		st.Jobs = append(st.Jobs, j)
	}
	why, err := kaiRoom(ctx, c, in, k, &st.Cluster)
	return st, why, err
}

func kaiOwned(pg *unstructured.Unstructured, own map[string]bool) bool {
	for _, r := range pg.GetOwnerReferences() {
		if own[pg.GetNamespace()+"/"+r.Kind+"/"+r.Name] {
			return true
		}
	}
	return false
}

// kaiRoom sets what KAI divides and what of it is free, the input's own
// pods (a run already applied) not counted as holding any.
func kaiRoom(ctx context.Context, c *kube.Conn, in Input, k *cache, cl *schedkai.Cluster) (string, error) {
	nodes := k.nodesOf(ctx, c)
	if nodes.out != kube.Found {
		return readFailure("the Nodes", nodes.out, nodes.err), nodes.err
	}
	ready := map[string]bool{}
	for _, n := range nodes.nodes {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready[n.Name] = true
				cl.Total = cl.Total.Add(schedkai.FromList(n.Status.Allocatable))
			}
		}
	}
	ours := map[string]bool{}
	for _, ps := range in.Pods {
		if run := ps.Meta.Labels[vocab.InstanceLabel]; run != "" {
			ours[ps.Namespace+"/"+run] = true
		}
	}
	var used schedkai.Resources
	more, out, err := c.Each(ctx, kube.Pods, "", kube.MaxClusterItems, kube.MaxKindBytes, func(u *unstructured.Unstructured) {
		var p corev1.Pod
		unread(u)
		if kube.Decode(u, &p) != nil || !ready[p.Spec.NodeName] || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || ours[p.Namespace+"/"+p.Labels[vocab.InstanceLabel]] {
			return
		}
		req := schedkai.FromList(placement.PodRequests(&p))
		if p.Spec.SchedulerName == vocab.KAISchedulerName {
			used = used.Add(req)
		} else {
			cl.Total = cl.Total.Sub(req)
		}
	})
	switch {
	case kube.Stops(err):
		return "", err
	case out != kube.Found:
		return readFailure("the bound Pods", out, err), nil
	case more:
		return fmt.Sprintf("the bound Pods are more than %d", kube.MaxClusterItems), nil
	}
	cl.Free = cl.Total.Sub(used)
	return "", nil
}
