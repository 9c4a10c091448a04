package preflight

import (
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// PodShape is one kind of pod the input's objects make, as KubeRay creates
// them (fn/analyse/workload), and how many: a head, a worker group
// (replicas clamped as KubeRay starts them, × numOfHosts), a Deployment's
// replicas, a submitter.
type PodShape struct {
	Owner, Role string
	Count       int64
	Pod         *corev1.Pod
	// Kueue says what Kueue's admission changes in the pods (the flavors'
	// node labels), or why it refuses them (KueueRefuses).
	Kueue        string
	KueueRefuses bool
	// KueueUnread names the Kueue object that could not be read and why:
	// how Kueue changes the pod set is unknown, so is where it goes.
	KueueUnread string
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
			spec, err := rayClusterSpecOf(d)
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

func sortedNames(l corev1.ResourceList) []corev1.ResourceName { return placement.SortedNames(l) }

// rayClusterSpecOf is the RayCluster spec of a RayCluster or RayJob
// document (nil for a RayJob that submits to an existing cluster).
func rayClusterSpecOf(d rendered.Doc) (*rayv1.RayClusterSpec, error) {
	if d.Kind == "RayCluster" {
		var rc rayv1.RayCluster
		if err := fromData(d, &rc); err != nil {
			return nil, err
		}
		return &rc.Spec, nil
	}
	var j rayv1.RayJob
	if err := fromData(d, &j); err != nil {
		return nil, err
	}
	return j.Spec.RayClusterSpec, nil
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
