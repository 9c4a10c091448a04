package preflight

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// gaps are the reads placement depends on that failed. notes are what
// was not subtracted (bound pods, allocated claims): the fleet looks
// roomier than it is, so an "ok" cannot be told while a "missing" still
// holds. blind are what the fleet's devices are made of (DeviceClasses,
// ResourceSlices): devices and classes unknown, no verdict can be told.
type gaps struct {
	notes, blind []string
}

// failed reports whether a read failed (refused, or an answer that is no
// list) rather than found nothing: an API that is not served (404) has
// no objects, which is an answer.
func failed(out kube.Outcome, err error) bool { return scheduler.Failed(outcome(out), err) }

// readFailure names a failed read and why: access refused (the error
// says "access refused (403 Forbidden)"), or an error.
func readFailure(what string, out kube.Outcome, err error) string {
	return scheduler.ReadFailure(what, outcome(out), err)
}

// fleetOf is the cluster as the scheduler sees it for the input: every
// counted node with what the pods bound to it leave of its allocatable,
// the DRA devices its ResourceSlices publish less those allocated
// ResourceClaims hold, and what each DeviceClass selects; and the pods
// already waiting for the scheduler, to place ahead of the input. The
// input's own pods, if it already runs, are not taken from it (they are
// placed again). gaps say what could not be read.
func fleetOf(ctx context.Context, c *kube.Conn, k *cache) (*placement.Fleet, []placement.Run, gaps, error) {
	f := &placement.Fleet{Drivers: map[string]string{}, Extended: map[corev1.ResourceName]string{}}
	byName := map[string]*placement.Node{}
	for _, n := range k.nodesOf(ctx, c).nodes {
		pn := &placement.Node{Node: n, Free: n.Status.Allocatable.DeepCopy(), Devices: map[string]int64{}}
		f.Nodes = append(f.Nodes, pn)
		byName[n.Name] = pn
	}
	var g gaps
	note := func(what string, out kube.Outcome, err error, more bool) {
		switch {
		case failed(out, err):
			g.notes = append(g.notes, readFailure(what, out, err)+", so are not subtracted")
		case out != kube.Found:
			_, d := verdict(out, err)
			g.notes = append(g.notes, what+" could not be read ("+d+"), so are not subtracted")
		case more:
			g.notes = append(g.notes, fmt.Sprintf("%s are more than %d, so not all are subtracted", what, kube.MaxClusterItems))
		}
	}
	classes, out, err := c.List(ctx, kube.DeviceClasses, "", "")
	if kube.Stops(err) {
		return nil, nil, g, err
	}
	if failed(out, err) {
		g.blind = append(g.blind, readFailure("the DeviceClasses (which devices a claim or an extended resource takes)", out, err))
	}
	for i := range classes {
		var dc resourcev1.DeviceClass
		if kube.Decode(&classes[i], &dc) != nil {
			continue
		}
		switch driver, bad := driverOf(&dc); {
		case bad >= 0:
			f.Drivers[dc.Name] = ""
		case driver == "":
			f.Drivers[dc.Name] = placement.AnyDriver
		default:
			f.Drivers[dc.Name] = driver
		}
		if dc.Spec.ExtendedResourceName != nil && out == kube.Found {
			f.Extended[corev1.ResourceName(*dc.Spec.ExtendedResourceName)] = dc.Name
		}
	}
	pools, blind, err := readSlices(ctx, c, byName)
	if err != nil {
		return nil, nil, g, err
	}
	g.blind = append(g.blind, blind...)
	pods := k.podsOf(ctx, c)
	if kube.Stops(pods.err) {
		return nil, nil, g, pods.err
	}
	subtractPods(byName, pods.bound)
	note("the pods already bound", pods.out, pods.err, pods.bound.More)
	if len(pods.pending) == maxPending {
		g.notes = append(g.notes, fmt.Sprintf("more than %d pods wait for the scheduler: the first %d are placed ahead of the input", maxPending, maxPending))
	}
	more, out, err := subtractClaims(ctx, c, byName, pools, pods.own)
	if kube.Stops(err) {
		return nil, nil, g, err
	}
	note("the ResourceClaims already allocated", out, err, more)
	return f, aheadOf(pods.pending), g, nil
}

// readSlices adds every node's published devices, per driver, and maps
// each pool (driver/pool) to its node; blind says why they could not all
// be read.
func readSlices(ctx context.Context, c *kube.Conn, nodes map[string]*placement.Node) (map[string]string, []string, error) {
	pools := map[string]string{}
	more, out, err := kube.EachAs(ctx, c, kube.ResourceSlices, "", kube.MaxClusterItems, kube.MaxKindBytes, func(s *leanSlice, err error) {
		if err != nil || s.Spec.NodeName == nil {
			return // a slice for many nodes (a network-attached pool) is not one node's
		}
		if n := nodes[*s.Spec.NodeName]; n != nil {
			n.Devices[s.Spec.Driver] += int64(len(s.Spec.Devices))
			pools[s.Spec.Driver+"/"+s.Spec.Pool.Name] = n.Name
		}
	})
	if kube.Stops(err) {
		return nil, nil, err
	}
	const what = "the ResourceSlices (the devices each node publishes)"
	switch {
	case failed(out, err):
		return pools, []string{readFailure(what, out, err)}, nil
	case more:
		return pools, []string{fmt.Sprintf("%s are more than %d, so not all are counted", what, kube.MaxClusterItems)}, nil
	}
	return pools, nil, nil
}

// subtractPods takes from each node what the pods bound to it hold,
// but those being deleted.
func subtractPods(nodes map[string]*placement.Node, bound scheduler.BoundPods) {
	for name, n := range nodes {
		for _, h := range bound.Holders(name) {
			if h.Deleting {
				continue
			}
			for res, q := range bound.Held[name][h] {
				have := n.Free[res]
				have.Sub(q)
				n.Free[res] = have
			}
		}
	}
}

// maxPending bounds the pods waiting for the scheduler that are placed
// ahead of the input: more than that many Pending pods is a cluster whose
// queue preflight does not model pod by pod.
const maxPending = 5000

// aheadOf is the pods already waiting for the scheduler, each placed
// before the input's runs, in the scheduler's queue order (priority, then
// the oldest first): a pod that fits now is bound before the input's pods
// are created. Their DRA claims are not counted (not yet allocated).
func aheadOf(pending []*corev1.Pod) []placement.Run {
	sort.SliceStable(pending, func(i, j int) bool {
		pi, pj := priorityOf(pending[i]), priorityOf(pending[j])
		if pi != pj {
			return pi > pj
		}
		return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp)
	})
	runs := make([]placement.Run, 0, len(pending))
	for _, p := range pending {
		req := placement.PodRequests(p)
		req[corev1.ResourcePods] = placement.Quantity(1)
		name := "Pod " + p.Namespace + "/" + p.Name
		pod := workload.Pod{Object: name, Namespace: p.Namespace, Count: 1, Meta: p.ObjectMeta, Spec: p.Spec}
		runs = append(runs, placement.Run{Name: name, Shapes: []placement.Shape{{Pod: pod, Requests: req}}})
	}
	return runs
}

func priorityOf(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// subtractClaims takes every device an allocated ResourceClaim holds from
// its node (its pool's), but those of claims only the input's own pods
// hold.
func subtractClaims(ctx context.Context, c *kube.Conn, nodes map[string]*placement.Node, pools map[string]string, own map[types.UID]bool) (bool, kube.Outcome, error) {
	return c.Each(ctx, kube.ResourceClaims, "", kube.MaxClusterItems, kube.MaxKindBytes, func(u *unstructured.Unstructured) {
		var rc resourcev1.ResourceClaim
		unread(u)
		if kube.Decode(u, &rc) != nil || rc.Status.Allocation == nil || ownOnly(rc.Status.ReservedFor, own) {
			return
		}
		for _, r := range rc.Status.Allocation.Devices.Results {
			if n := nodes[pools[r.Driver+"/"+r.Pool]]; n != nil {
				n.Devices[r.Driver]--
			}
		}
	})
}

// unread drops what placement never reads of a listed object before it
// is decoded: its annotations and managed fields, most of an object's
// size (and all of a hostile one's).
func unread(u *unstructured.Unstructured) {
	unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
}

func ownOnly(reserved []resourcev1.ResourceClaimConsumerReference, own map[types.UID]bool) bool {
	if len(reserved) == 0 || len(own) == 0 {
		return false
	}
	for _, r := range reserved {
		if !own[r.UID] {
			return false
		}
	}
	return true
}

// driverOf is the one driver a DeviceClass's selectors name
// (`device.driver == "..."`, what NVIDIA's and the NIC drivers' classes
// say); bad is the index of a selector of any other form (-1 when none),
// which this model does not evaluate: evaluating CEL
// here would link DRA's CEL compiler into every nrl-k8s process, whose
// package init the startup budget (tests/startup) does not allow.
func driverOf(dc *resourcev1.DeviceClass) (driver string, bad int) {
	for i, sel := range dc.Spec.Selectors {
		m := driverSelectorRE().FindStringSubmatch(strings.TrimSpace(exprOf(sel)))
		if m == nil || (driver != "" && driver != m[1]+m[2]) {
			return "", i
		}
		driver = m[1] + m[2]
	}
	return driver, -1
}
