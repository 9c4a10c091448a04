package preflight

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// podsRead is what every line of a preflight reads of the cluster's Pods,
// from one walk of them (a page at a time, a Pod held only while it is
// read): what the bound ones hold per node, the input's own (their UIDs,
// whose claims are not subtracted) and, when placing, the pods waiting
// for the scheduler.
type podsRead struct {
	bound   scheduler.BoundPods
	own     map[types.UID]bool
	pending []*corev1.Pod
	out     kube.Outcome
	err     error
}

// podsOf walks the Pods on first use, after the Nodes, whose pods it
// counts.
func (k *cache) podsOf(ctx context.Context, c *kube.Conn) *podsRead {
	if k.pods == nil {
		nodes := k.nodesOf(ctx, c)
		k.pods = readPods(ctx, c, nodes.nodes, k.ours, k.placing)
	}
	return k.pods
}

// oursOf is the input's runs, "namespace/name" by their identity label,
// which KubeRay copies onto every pod of a run.
func oursOf(in Input) map[string]bool {
	ours := map[string]bool{}
	for _, ps := range in.Pods {
		if run := ps.Meta.Labels[vocab.InstanceLabel]; run != "" {
			ours[ps.Namespace+"/"+run] = true
		}
	}
	return ours
}

// readPods walks the Pods once. An unfinished pod of one of ours is the
// input's own; any other counts on its node when bound to one of nodes,
// and waits for the scheduler (with placing, the first maxPending of
// them) when unbound, not being deleted, and not gated.
func readPods(ctx context.Context, c *kube.Conn, nodes []*corev1.Node, ours map[string]bool, placing bool) *podsRead {
	listed := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		listed[n.Name] = true
	}
	r := &podsRead{bound: scheduler.BoundPods{Held: map[string]map[scheduler.Holder]corev1.ResourceList{}, Limit: kube.MaxClusterItems},
		own: map[types.UID]bool{}}
	r.bound.More, r.out, r.err = eachPod(ctx, c, func(p *corev1.Pod) {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return
		}
		if run := p.Labels[vocab.InstanceLabel]; run != "" && ours[p.Namespace+"/"+run] {
			if p.DeletionTimestamp == nil {
				r.own[p.UID] = true
			}
			return
		}
		switch {
		case p.Spec.NodeName != "":
			if listed[p.Spec.NodeName] {
				r.bound.Add(p)
			}
		case placing && p.DeletionTimestamp == nil && len(p.Spec.SchedulingGates) == 0 && len(r.pending) < maxPending:
			r.pending = append(r.pending, p)
		}
	})
	return r
}

// eachPod visits every Pod of the cluster within the bounds of a
// cluster-wide read, a page at a time, each decoded without the fields
// no rule reads (unread); a Pod that does not decode is skipped.
func eachPod(ctx context.Context, c *kube.Conn, visit func(*corev1.Pod)) (bool, kube.Outcome, error) {
	return c.Each(ctx, kube.Pods, "", kube.MaxClusterItems, kube.MaxKindBytes, func(u *unstructured.Unstructured) {
		var p corev1.Pod
		unread(u)
		if kube.Decode(u, &p) == nil {
			visit(&p)
		}
	})
}
