package placement

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// firstFit is the first of nodes the pod passes every filter on, and what
// it takes there; why counts the reason each other node refuses it.
func (f *Fleet) firstFit(s Shape, p prepared, nodes []*Node, why map[string]int) (*Node, use) {
	affinity := p.affinity
	for _, n := range nodes {
		if ok, err := affinity.Match(n.Node); err != nil || !ok {
			why["node selector or affinity does not match"]++
			continue
		}
		if t, bad := untolerated(n, p.pod); bad {
			why["untolerated taint "+t.Key+":"+string(t.Effect)]++
			continue
		}
		by, short := f.fits(n, s, p)
		if short != "" {
			why["not enough free "+short]++
			continue
		}
		return n, by
	}
	return nil, use{}
}

// prepared is what firstFit reads of a shape for every node, made once.
type prepared struct {
	pod      *corev1.Pod
	affinity nodeaffinity.RequiredNodeAffinity
	names    []corev1.ResourceName
	classes  []string
}

func prepare(s Shape) prepared {
	pod := s.AsPod()
	return prepared{pod: pod, affinity: nodeaffinity.GetRequiredNodeAffinity(pod), names: SortedNames(s.Requests), classes: tree.SortedKeys(s.Claims)}
}

// untolerated is the first NoSchedule or NoExecute taint of the node the
// pod does not tolerate; a cordoned node carries the scheduler's
// node.kubernetes.io/unschedulable taint.
func untolerated(n *Node, pod *corev1.Pod) (corev1.Taint, bool) {
	taints := n.Spec.Taints
	if n.Spec.Unschedulable {
		taints = append(append([]corev1.Taint{}, taints...), corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	noSchedule := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	return corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, pod.Spec.Tolerations, noSchedule, false)
}

// fits is what the pod takes of node n, or names what n has too little
// of: each requested resource against what is free (an extended resource
// the node does not advertise and a DeviceClass declares is served by that
// class's devices), then the devices of each claim, per driver.
func (f *Fleet) fits(n *Node, s Shape, p prepared) (use, string) {
	var by use
	var short []string
	for _, name := range p.names {
		q := s.Requests[name]
		if class, ok := f.Extended[name]; ok && !Advertises(n.Node, name) {
			if driver := f.Drivers[class]; driver != "" {
				by.need(driver, q.Value())
				if by.viaDRA == nil {
					by.viaDRA = map[corev1.ResourceName]bool{}
				}
				by.viaDRA[name] = true
				continue
			}
		}
		have := n.Free[name]
		if have.Cmp(q) < 0 {
			short = append(short, string(name))
		}
	}
	var anyDriver int64
	for _, class := range p.classes {
		switch driver := f.Drivers[class]; driver {
		case "":
		case AnyDriver:
			anyDriver += s.Claims[class]
		default:
			by.need(driver, s.Claims[class])
		}
	}
	for _, driver := range tree.SortedKeys(by.devices) {
		if n.Devices[driver] < by.devices[driver] {
			short = append(short, "devices of "+driver)
		}
	}
	if anyDriver > 0 && len(short) == 0 && !takeAny(n, &by, anyDriver) {
		short = append(short, "devices")
	}
	return by, strings.Join(short, ", ")
}

// takeAny adds to need n devices of whichever drivers the node has left
// after need, in driver order; false when it has fewer.
func takeAny(node *Node, by *use, n int64) bool {
	for _, driver := range tree.SortedKeys(node.Devices) {
		left := node.Devices[driver] - by.devices[driver]
		if left <= 0 {
			continue
		}
		take := min(left, n)
		by.need(driver, take)
		n -= take
		if n == 0 {
			return true
		}
	}
	return false
}

// need adds n devices of driver to what the pod takes.
func (u *use) need(driver string, n int64) {
	if u.devices == nil {
		u.devices = map[string]int64{}
	}
	u.devices[driver] += n
}

// Advertises reports whether the node advertises resource name in its
// allocatable (a device plugin's count).
func Advertises(n *corev1.Node, name corev1.ResourceName) bool {
	q, ok := n.Status.Allocatable[name]
	return ok && q.Sign() > 0
}

// SortedNames is the list's resource names in order.
func SortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Reaches reports whether some node carrying label key passes the shape's
// node affinity and taints, resources aside: whether a required level of
// key can hold its pods at all.
func (f *Fleet) Reaches(key string, s Shape) bool {
	pod := s.AsPod()
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, n := range f.Nodes {
		if _, ok := n.Labels[key]; !ok {
			continue
		}
		if ok, err := affinity.Match(n.Node); err != nil || !ok {
			continue
		}
		if _, bad := untolerated(n, pod); !bad {
			return true
		}
	}
	return false
}
