package preflight

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

// extendedResourceLine says where an extended resource the pods request
// comes from: the nodes that advertise it (a device plugin, counted in
// allocatable), else a DeviceClass declaring it as its extendedResourceName
// (Kubernetes' DRA extended resources: the scheduler satisfies the request
// from that class's devices). Neither: every pod requesting it stays
// Pending.
func extendedResourceLine(ctx context.Context, c *kube.Conn, l Line) (Line, error) {
	name := corev1.ResourceName(l.Name)
	items, out, err := c.List(ctx, kube.Nodes, "", "")
	if kube.Stops(err) {
		return l, err
	}
	if out != kube.Found {
		l.State, l.Detail = verdict(out, err)
		return l, nil
	}
	nodes, most := 0, int64(0)
	for i := range items {
		var n corev1.Node
		if kube.Decode(&items[i], &n) != nil {
			continue
		}
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
	return l, nil
}
