package placement

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

var gpuTaint = corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}

// tainted is n with taints; cordoned n is unschedulable.
func tainted(n *Node, taints ...corev1.Taint) *Node {
	n.Spec.Taints = taints
	return n
}

// short is n with 5 CPUs free.
func short(n *Node) *Node {
	n.Free[corev1.ResourceCPU] = Quantity(5)
	return n
}

func cordoned(n *Node) *Node {
	n.Spec.Unschedulable = true
	return n
}

// The first node passing every filter takes the pod (devices per driver,
// an extended resource from its DeviceClass where the node does not
// advertise it, any driver for a class without selectors); every other
// node counts the reason it refuses.
func TestFirstFit(t *testing.T) {
	gpuNode := func(name string, gpus int64, devices map[string]int64) *Node {
		return node(name, map[string]string{"gpu": "yes"}, gpus, devices)
	}
	tolerant := worker("w", 1, 4, nil)
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
	for _, tc := range []struct {
		name    string
		fleet   Fleet
		shape   Shape
		want    string // "" for no node
		devices map[string]int64
		why     map[string]int
	}{
		{"first fitting node", Fleet{Nodes: []*Node{gpuNode("a", 4, nil), gpuNode("b", 4, nil)}}, worker("w", 1, 4, nil), "a", nil, map[string]int{}},
		{"selector, taint, GPUs, cordon refuse", Fleet{Nodes: []*Node{
			node("cpu", map[string]string{"cpu": "yes"}, 0, nil), tainted(gpuNode("t", 4, nil), gpuTaint),
			gpuNode("small", 2, nil), cordoned(gpuNode("c", 4, nil)), gpuNode("ok", 4, nil)}}, worker("w", 1, 4, nil), "ok", nil,
			map[string]int{"node selector or affinity does not match": 1, "untolerated taint nvidia.com/gpu:NoSchedule": 1,
				"not enough free nvidia.com/gpu": 1, "untolerated taint node.kubernetes.io/unschedulable:NoSchedule": 1}},
		{"tolerated taint", Fleet{Nodes: []*Node{tainted(gpuNode("t", 4, nil), gpuTaint)}}, tolerant, "t", nil, map[string]int{}},
		{"PreferNoSchedule taint ignored", Fleet{Nodes: []*Node{tainted(gpuNode("t", 4, nil), corev1.Taint{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule})}},
			worker("w", 1, 4, nil), "t", nil, map[string]int{}},
		{"claimed devices per driver", Fleet{Drivers: map[string]string{"roce": "roce.example"}, Nodes: []*Node{
			gpuNode("few", 4, map[string]int64{"roce.example": 4}), gpuNode("many", 4, map[string]int64{"roce.example": 8})}},
			worker("w", 1, 4, map[string]int64{"roce": 8}), "many", map[string]int64{"roce.example": 8}, map[string]int{"not enough free devices of roce.example": 1}},
		{"class of no evaluated driver", Fleet{Drivers: map[string]string{"other": ""}, Nodes: []*Node{gpuNode("a", 4, nil)}},
			worker("w", 1, 4, map[string]int64{"other": 8}), "a", nil, map[string]int{}},
		{"GPUs from an extended resource's class", Fleet{Drivers: map[string]string{"gpu": "gpu.example"}, Extended: map[corev1.ResourceName]string{"nvidia.com/gpu": "gpu"},
			Nodes: []*Node{gpuNode("none", 0, map[string]int64{"gpu.example": 2}), gpuNode("dra", 0, map[string]int64{"gpu.example": 8})}},
			worker("w", 1, 4, nil), "dra", map[string]int64{"gpu.example": 4}, map[string]int{"not enough free devices of gpu.example": 1}},
		{"advertised GPUs before the class", Fleet{Drivers: map[string]string{"gpu": "gpu.example"}, Extended: map[corev1.ResourceName]string{"nvidia.com/gpu": "gpu"},
			Nodes: []*Node{gpuNode("plugin", 4, nil)}}, worker("w", 1, 4, nil), "plugin", nil, map[string]int{}},
		{"any driver across drivers", Fleet{Drivers: map[string]string{"all": AnyDriver}, Nodes: []*Node{
			gpuNode("few", 4, map[string]int64{"a.example": 2}), gpuNode("two", 4, map[string]int64{"a.example": 2, "b.example": 3})}},
			worker("w", 1, 4, map[string]int64{"all": 4}), "two", map[string]int64{"a.example": 2, "b.example": 2}, map[string]int{"not enough free devices": 1}},
		{"short of two, in name order", Fleet{Nodes: []*Node{short(gpuNode("small", 2, nil))}}, worker("w", 1, 4, nil), "", nil,
			map[string]int{"not enough free cpu, nvidia.com/gpu": 1}},
		{"no node", Fleet{Nodes: []*Node{gpuNode("small", 2, nil)}}, worker("w", 1, 4, nil), "", nil, map[string]int{"not enough free nvidia.com/gpu": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := map[string]int{}
			n, by := tc.fleet.firstFit(tc.shape, prepare(tc.shape), tc.fleet.Nodes, why)
			got := ""
			if n != nil {
				got = n.Name
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.devices, by.devices)
			require.Equal(t, tc.why, why)
		})
	}
}

// Reaches asks only for a node with the level's label that the pod may
// land on, whatever is free there.
func TestReaches(t *testing.T) {
	rack := func(name string, gpus int64) *Node {
		return node(name, map[string]string{"gpu": "yes", "rack": "0"}, gpus, nil)
	}
	for _, tc := range []struct {
		name  string
		nodes []*Node
		want  bool
	}{
		{"labelled node, resources aside", []*Node{rack("a", 0)}, true},
		{"no labelled node", []*Node{node("a", map[string]string{"gpu": "yes"}, 4, nil)}, false},
		{"labelled node off the selector", []*Node{node("a", map[string]string{"rack": "0"}, 4, nil)}, false},
		{"labelled node tainted", []*Node{tainted(rack("a", 4), gpuTaint)}, false},
		{"labelled node cordoned", []*Node{cordoned(rack("a", 4))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, (&Fleet{Nodes: tc.nodes}).Reaches("rack", worker("w", 1, 4, nil)))
		})
	}
}
