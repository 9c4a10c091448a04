package preflight

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
)

// extendedResourceLine says where an extended resource the pods request
// comes from: the nodes that advertise it (a device plugin, counted in
// allocatable), else a DeviceClass declaring it as its extendedResourceName
// (Kubernetes' DRA extended resources: the scheduler satisfies the request
// from that class's devices). Neither: every pod requesting it stays
// Pending.
func extendedResourceLine(ctx context.Context, c *kube.Conn, l Line, k *cache) (Line, error) {
	name := corev1.ResourceName(l.Name)
	all := k.nodesOf(ctx, c)
	if kube.Stops(all.err) {
		return l, all.err
	}
	if all.out != kube.Found {
		l.State, l.Detail = verdict(all.out, all.err)
		return l, nil
	}
	bad := all.bad
	nodes, most := 0, int64(0)
	for _, n := range all.nodes {
		if q, ok := n.Status.Allocatable[name]; ok && q.Value() > 0 {
			nodes++
			most = max(most, q.Value())
		}
	}
	if nodes > 0 {
		l.State, l.Detail = OK, fmt.Sprintf("advertised by %d node(s) (a device plugin), up to %d per node", nodes, most)
		return l, nil
	}
	classes, out, err := c.List(ctx, kube.DeviceClasses, "", "")
	if kube.Stops(err) {
		return l, err
	}
	if out == kube.Found {
		for i := range classes {
			var dc resourcev1.DeviceClass
			if kube.Decode(&classes[i], &dc) == nil && dc.Spec.ExtendedResourceName != nil && *dc.Spec.ExtendedResourceName == l.Name {
				l.State, l.Detail = OK, fmt.Sprintf("no node advertises it; DeviceClass %s declares it as its extendedResourceName (DRA serves the request)", dc.Name)
				return l, nil
			}
		}
	}
	l.State = Missing
	l.Detail = fmt.Sprintf("no node advertises %s and no DeviceClass declares extendedResourceName: %s; the pods requesting it stay Pending (install the device plugin, or give the DRA driver's DeviceClass extendedResourceName: %s)", l.Name, l.Name, l.Name)
	if len(bad) > 0 {
		l.State, l.Detail = CannotTell, "no node counted advertises "+l.Name+"; "+leftOut(bad)
	}
	return l, nil
}

// readNode is a listed Node as read (err: a field that did not decode),
// leaving out (naming why) one whose allocatable holds a value no node
// has: counted, a node with 1e30 GPUs would place every pod, one with -8
// none.
func readNode(l *leanNode, err error) (*corev1.Node, string) {
	n := l.node()
	if err != nil {
		return nil, "node " + n.Name + " cannot be read"
	}
	if why := badAllocatable(n); why != "" {
		return nil, why
	}
	return n, ""
}

// badAllocatable names the first allocatable value of a node out of range.
func badAllocatable(n *corev1.Node) string {
	for _, name := range sortedNames(n.Status.Allocatable) {
		q := n.Status.Allocatable[name]
		if err := placement.InRange(q, q.String()); err != nil {
			return fmt.Sprintf("node %s's allocatable %s %s", n.Name, name, err)
		}
	}
	return ""
}

// leftOut says which nodes were not counted and why.
func leftOut(bad []string) string {
	if len(bad) > 3 {
		bad = append(bad[:3:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return "left out, as no node has such a value: " + strings.Join(bad, "; ")
}
