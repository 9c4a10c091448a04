// Package placement places runs' pods on a fleet of nodes as the scheduler
// their pods name would: kube-scheduler's filters (required node affinity
// and nodeSelector, NoSchedule/NoExecute taints and cordon, every requested
// resource against what is free on the node, DRA devices claimed on the
// pod's own node, extended resources a DeviceClass serves), pod by pod for
// the default scheduler, and for KAI one gang all or nothing, kept in one
// domain of a required topology level, as fn/analyse/kai models KAI's
// PodGroup. Runs are placed one after another, each on what the earlier
// ones (and the pods already running) left. A run Kueue admits is placed
// with the pods Kueue starts (fn/scheduler/kueue's Admit: its flavors'
// node labels and tolerations merged into every pod set).
//
// It has no I/O: preflight (fn/afterapply/preflight) fills the fleet from a
// cluster, and the scheduling tier holds its answers to the real
// kube-scheduler's, run by run.
package placement

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

// Node is one node as the scheduler's filters see it.
type Node struct {
	*corev1.Node
	// Free is what the pods bound to it leave of its allocatable.
	Free corev1.ResourceList
	// Devices are the DRA devices its ResourceSlices publish that no
	// allocated ResourceClaim holds, per driver.
	Devices map[string]int64
}

// Fleet is the nodes (in name order, the order pods are tried on) and what
// the cluster's DeviceClasses select.
type Fleet struct {
	Nodes []*Node
	// Drivers is the one driver each DeviceClass's selectors name,
	// AnyDriver for a class without selectors (every device); a class
	// mapped to "" selects devices this model does not evaluate.
	Drivers map[string]string
	// Extended maps an extended resource to the DeviceClass that declares
	// it as its extendedResourceName: on a node that does not advertise the
	// resource, the scheduler serves a request for it with that many of the
	// class's devices (Kubernetes' DRA extended resources).
	Extended map[corev1.ResourceName]string
	// byKey holds each label key's domains once made.
	byKey map[string][]domain
}

// AnyDriver is the Drivers value of a DeviceClass without selectors: it
// selects every device of every driver.
const AnyDriver = "*"

// Shape is one kind of pod a run makes and how many (workload.Pod, the
// one pod-group model), with what the scheduler reads of it.
type Shape struct {
	workload.Pod
	// MinMember is how many of them a gang needs placed (KAI's subgroup
	// minMember); 0 means Count.
	MinMember int64
	// Requests are the pod's requests, pods: 1 included.
	Requests corev1.ResourceList
	// Claims are the DRA devices each pod claims on its node, per DeviceClass.
	Claims map[string]int64
	// Required is a node label every pod of this shape shares one value of
	// (a KAI subgroup's required placement).
	Required string
}

// Run is the pods one object makes, placed together.
type Run struct {
	Name string
	// Gang: KAI places the run's pods all or nothing, as PodGroup.
	Gang     bool
	PodGroup kai.PodGroup
	// Required is a node label every pod of the gang shares one value of
	// (the PodGroup's required placement: one rack).
	Required string
	Shapes   []Shape
}

// Result is where a shape's pods went.
type Result struct {
	// Placed pods; for a gang that waits, 0, and Fit how many would fit.
	Placed, Fit int64
	// Why counts, per reason, the nodes that refused the first pod that
	// fit nowhere.
	Why map[string]int
}

// RunResult is a run's outcome.
type RunResult struct {
	Shapes []Result
	// Waits: a gang that does not fit, so no pod of it is placed.
	Waits bool
	// Domain is the value of Required the gang was placed in.
	Domain string
}

// Placed is how many of the run's pods are placed, and of how many.
func (r RunResult) Placed(run Run) (placed, total int64) {
	for i, s := range r.Shapes {
		placed += s.Placed
		total += run.Shapes[i].Count
	}
	return placed, total
}

// fit is how many of the run's pods would fit, pod by pod.
func (r RunResult) fit() int64 {
	var n int64
	for _, s := range r.Shapes {
		n += s.Fit
	}
	return n
}

// Held is what the placed pods of the run hold of resource name.
func (r RunResult) Held(run Run, name corev1.ResourceName) int64 {
	var n int64
	for i, s := range r.Shapes {
		q := run.Shapes[i].Requests[name]
		n += s.Placed * q.Value()
	}
	return n
}

// Place places the runs one after another, each on what the earlier ones
// left, and returns each run's outcome.
func (f *Fleet) Place(runs []Run) []RunResult {
	sort.SliceStable(f.Nodes, func(i, j int) bool { return f.Nodes[i].Name < f.Nodes[j].Name })
	f.byKey = nil
	out := make([]RunResult, len(runs))
	for i, r := range runs {
		if r.Gang {
			out[i] = f.gang(r)
			continue
		}
		var undo undoLog
		for _, s := range r.Shapes {
			out[i].Shapes = append(out[i].Shapes, f.shape(s, f.Nodes, &undo))
		}
	}
	return out
}

// gang places the run all or nothing: in the first domain of its required
// level where every shape gets its MinMember (every node when it requires
// none). A run that fits nowhere places nothing; its results say how many
// pods fit in the domain where most did.
func (f *Fleet) gang(r Run) RunResult {
	var best RunResult
	bestFit := int64(-1)
	for _, d := range f.domains(r.Required) {
		var undo undoLog
		res, ok := RunResult{Domain: d.value}, true
		for _, s := range r.Shapes {
			one := f.subgroup(s, d.nodes, r.Required != "", &undo)
			res.Shapes = append(res.Shapes, one)
			ok = ok && one.Placed >= s.need()
		}
		if ok {
			return res
		}
		undo.revert(f)
		if fit := res.fit(); fit > bestFit {
			best, bestFit = res, fit
		}
	}
	best.Waits, best.Domain = true, ""
	for i := range best.Shapes {
		best.Shapes[i].Placed = 0
	}
	if best.Shapes == nil {
		best.Shapes = make([]Result, len(r.Shapes))
	}
	return best
}

// subgroup places one shape of a gang on nodes (the run's domain when
// bounded): in the first domain of its own required level where MinMember
// fit, when it has one.
func (f *Fleet) subgroup(s Shape, nodes []*Node, bounded bool, undo *undoLog) Result {
	if s.Required == "" {
		return f.shape(s, nodes, undo)
	}
	var in map[*Node]bool
	if bounded {
		in = make(map[*Node]bool, len(nodes))
		for _, n := range nodes {
			in[n] = true
		}
	}
	var best Result
	for _, d := range f.domains(s.Required) {
		both := d.nodes
		if in != nil {
			both = nil
			for _, n := range d.nodes {
				if in[n] {
					both = append(both, n)
				}
			}
		}
		mark := len(*undo)
		res := f.shape(s, both, undo)
		if res.Placed >= s.need() {
			return res
		}
		undo.revertTo(f, mark)
		if res.Placed > best.Placed || best.Why == nil {
			best = res
		}
	}
	best.Placed = 0
	return best
}

// shape places as many of s's pods as fit, first fit in name order, on
// nodes.
func (f *Fleet) shape(s Shape, nodes []*Node, undo *undoLog) Result {
	res := Result{Why: map[string]int{}}
	p := prepare(s)
	for k := int64(0); k < s.Count; k++ {
		why := map[string]int{}
		n, by := f.firstFit(s, p, nodes, why)
		if n == nil {
			res.Why = why // the first pod that fits nowhere, node by node
			break
		}
		undo.take(n, s.Requests, by)
		res.Placed++
	}
	res.Fit = res.Placed
	return res
}

func (s Shape) need() int64 {
	if s.MinMember > 0 {
		return min(s.MinMember, s.Count)
	}
	return s.Count
}

// domain is one value of a label key and its nodes, in name order.
type domain struct {
	value string
	nodes []*Node
}

// domains are the domains of label key, in value order, made once per
// key; one domain of every node when key is "".
func (f *Fleet) domains(key string) []domain {
	if key == "" {
		return []domain{{nodes: f.Nodes}}
	}
	if ds, ok := f.byKey[key]; ok {
		return ds
	}
	index := map[string]int{}
	var out []domain
	for _, n := range f.Nodes {
		v, ok := n.Labels[key]
		if !ok {
			continue
		}
		i, seen := index[v]
		if !seen {
			i = len(out)
			index[v] = i
			out = append(out, domain{value: v})
		}
		out[i].nodes = append(out[i].nodes, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].value < out[j].value })
	if f.byKey == nil {
		f.byKey = map[string][]domain{}
	}
	f.byKey[key] = out
	return out
}

// undoLog records what placing took, so a gang that does not fit gives it back.
type undoLog []taken

type taken struct {
	node *Node
	req  corev1.ResourceList
	use  use
}

// use is what one pod takes of a node besides its requests: DRA devices
// per driver, and the extended resources those devices serve (not taken
// from allocatable).
type use struct {
	devices map[string]int64
	viaDRA  map[corev1.ResourceName]bool
}

func (u *undoLog) take(n *Node, req corev1.ResourceList, by use) {
	n.add(req, by, -1)
	*u = append(*u, taken{node: n, req: req, use: by})
}

func (u *undoLog) revert(f *Fleet) { u.revertTo(f, 0) }

func (u *undoLog) revertTo(_ *Fleet, mark int) {
	for i := len(*u) - 1; i >= mark; i-- {
		t := (*u)[i]
		t.node.add(t.req, t.use, 1)
	}
	*u = (*u)[:mark]
}

// add gives back (sign 1) or takes (sign -1) one pod's requests and devices.
func (n *Node) add(req corev1.ResourceList, by use, sign int64) {
	for name, q := range req {
		if by.viaDRA[name] {
			continue
		}
		have := n.Free[name]
		if sign < 0 {
			have.Sub(q)
		} else {
			have.Add(q)
		}
		n.Free[name] = have
	}
	for d, c := range by.devices {
		n.Devices[d] += sign * c
	}
}

// Quantity is n as a quantity.
func Quantity(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
