package preflight

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/rendered"
)

// PodShape is one kind of pod the input's objects make, as KubeRay creates
// them (fn/analyse/workload), and how many: a head, a worker group
// (replicas clamped as KubeRay starts them, × numOfHosts), a Deployment's
// replicas, a submitter.
type PodShape struct {
	Owner, Role string
	Count       int64
	Pod         *corev1.Pod
}

// PodShapes lists every pod the objects of the input make, every run of it
// together, in object order.
func PodShapes(docs []rendered.Doc) ([]PodShape, error) {
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
	}
	read, err := workload.Objects(objs)
	if err != nil {
		return nil, err
	}
	pods, errs := workload.Pods(read)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	counts, err := podCounts(docs)
	if err != nil {
		return nil, err
	}
	var out []PodShape
	for _, p := range pods {
		n, ok := counts[p.Object+" "+p.Role]
		if !ok {
			n = 1 // a head, a submitter, a Pod
		}
		if n == 0 {
			continue
		}
		pod := &corev1.Pod{ObjectMeta: p.Meta, Spec: p.Spec}
		pod.Namespace = p.Namespace
		out = append(out, PodShape{Owner: p.Object, Role: p.Role, Count: n, Pod: pod})
	}
	return out, nil
}

// podCounts are the worker groups' and Deployments' pod counts, keyed as
// workload names the pods ("RayJob/x worker group g").
func podCounts(docs []rendered.Doc) (map[string]int64, error) {
	out := map[string]int64{}
	for _, d := range docs {
		owner := d.Kind + "/" + d.Name
		switch d.Kind {
		case "RayCluster", "RayJob":
			// A suspended or queued run is placed at the size it runs at.
			spec, _, err := rayClusterSpecOf(d)
			if err != nil || spec == nil {
				if err != nil {
					return nil, err
				}
				continue
			}
			for i := range spec.WorkerGroupSpecs {
				g := &spec.WorkerGroupSpecs[i]
				out[owner+" worker group "+g.GroupName] = capacity.WorkerPods(g, false)
			}
		case "Deployment":
			n := int64(1)
			if r, ok := nestedInt(d.Data, "spec", "replicas"); ok {
				n = r
			}
			out[owner+" pod"] = n
		}
	}
	return out, nil
}

// placement places every pod of the input on the cluster's nodes together,
// first fit in name order, as the scheduler's filters would admit them:
// required node affinity and nodeSelector (component-helpers' nodeaffinity),
// NoSchedule and NoExecute taints and cordon (component-helpers'
// FindMatchingUntoleratedTaint; a cordoned node carries the scheduler's
// node.kubernetes.io/unschedulable taint), and every requested resource
// against allocatable (component-helpers' PodRequests). Pods already
// running are not subtracted, and DRA claims are judged apart
// (checkDevices): the lines say so.
func placement(ctx context.Context, c *kube.Conn, shapes []PodShape, k *cache) ([]Line, error) {
	all := k.nodesOf(ctx, c)
	if kube.Stops(all.err) {
		return nil, all.err
	}
	if all.out != kube.Found {
		l := Line{Need: Need{Kind: "Nodes", APIVersion: "v1", Name: "(all)", Why: "where the run's pods go"}}
		l.State, l.Detail = verdict(all.out, all.err)
		return []Line{l}, nil
	}
	nodes, bad := slices.Clone(all.nodes), all.bad
	free := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		free[n.Name] = n.Status.Allocatable.DeepCopy()
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var lines []Line
	for _, s := range shapes {
		req := podRequests(s.Pod)
		req[corev1.ResourcePods] = *resourceQuantity(1)
		placed, why := int64(0), map[string]int{}
		for k := int64(0); k < s.Count; k++ {
			n := firstFit(nodes, free, s.Pod, req, why)
			if n == nil {
				break
			}
			take(free[n.Name], req)
			placed++
		}
		l := Line{Need: Need{Kind: "Nodes", APIVersion: "v1", Name: s.Owner + " " + s.Role,
			Why: fmt.Sprintf("%d pod(s) requesting %s", s.Count, requestText(req))}}
		l.State, l.Detail = OK, fmt.Sprintf("all %d placed on the nodes, with every other pod of the input", s.Count)
		if placed < s.Count {
			l.State = Missing
			l.Detail = fmt.Sprintf("%d of %d placed with every other pod of the input; the rest fit no node: %s", placed, s.Count, reasons(why))
		}
		if len(bad) > 0 {
			// The nodes left out may hold what the rest needs, or not.
			if l.State == Missing {
				l.State = CannotTell
			}
			l.Detail += "; " + leftOut(bad)
		}
		l.Detail += " (pods already running and DRA devices are not counted here)"
		lines = append(lines, l)
	}
	return lines, nil
}

// firstFit is the first node the pod passes every filter on, counting in
// why the reason each other node fails it.
func firstFit(nodes []*corev1.Node, free map[string]corev1.ResourceList, pod *corev1.Pod, req corev1.ResourceList, why map[string]int) *corev1.Node {
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	noSchedule := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	for _, n := range nodes {
		taints := n.Spec.Taints
		if n.Spec.Unschedulable {
			taints = append(append([]corev1.Taint{}, taints...), corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
		}
		if ok, err := affinity.Match(n); err != nil || !ok {
			why["node selector or affinity does not match"]++
			continue
		}
		if t, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, pod.Spec.Tolerations, noSchedule, false); bad {
			why["untolerated taint "+t.Key+":"+string(t.Effect)]++
			continue
		}
		if short := shortOf(free[n.Name], req); short != "" {
			why["not enough free "+short]++
			continue
		}
		return n
	}
	return nil
}

// shortOf names every resource the node has too little of for req.
func shortOf(free, req corev1.ResourceList) string {
	var short []string
	for _, name := range sortedNames(req) {
		have := free[name]
		if have.Cmp(req[name]) < 0 {
			short = append(short, string(name))
		}
	}
	return strings.Join(short, ", ")
}

func take(free, req corev1.ResourceList) {
	for name, q := range req {
		have := free[name]
		have.Sub(q)
		free[name] = have
	}
}

func reasons(why map[string]int) string {
	if len(why) == 0 {
		return "the cluster has no nodes"
	}
	keys := make([]string, 0, len(why))
	for k := range why {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, why[k])
	}
	return strings.Join(parts, ", ")
}

func requestText(req corev1.ResourceList) string {
	var parts []string
	for _, name := range sortedNames(req) {
		if name == corev1.ResourcePods {
			continue
		}
		q := req[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// rayClusterSpecOf is the RayCluster spec of a RayCluster or RayJob
// document (nil for a RayJob that submits to an existing cluster), and
// whether KubeRay starts none of its pods (a suspended RayJob or cluster).
func rayClusterSpecOf(d rendered.Doc) (*rayv1.RayClusterSpec, bool, error) {
	if d.Kind == "RayCluster" {
		var rc rayv1.RayCluster
		if err := fromData(d, &rc); err != nil {
			return nil, false, err
		}
		return &rc.Spec, capacity.Suspended(&rc.Spec), nil
	}
	var j rayv1.RayJob
	if err := fromData(d, &j); err != nil {
		return nil, false, err
	}
	if j.Spec.RayClusterSpec == nil {
		return nil, false, nil
	}
	return j.Spec.RayClusterSpec, j.Spec.Suspend || capacity.Suspended(j.Spec.RayClusterSpec), nil
}

func nestedInt(m map[string]any, path ...string) (int64, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		cur = mm[k]
	}
	switch v := cur.(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

func podRequestsOf(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
