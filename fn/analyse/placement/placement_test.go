package placement

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

func node(name string, labels map[string]string, gpus int64, devices map[string]int64) *Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourcePods: resource.MustParse("110")}
	if gpus > 0 {
		alloc["nvidia.com/gpu"] = Quantity(gpus)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{Allocatable: alloc}}
	if devices == nil {
		devices = map[string]int64{}
	}
	return &Node{Node: n, Free: alloc.DeepCopy(), Devices: devices}
}

func worker(name string, count int64, gpus int64, claims map[string]int64) Shape {
	pod := workload.Pod{Object: name, Count: count, Spec: corev1.PodSpec{NodeSelector: map[string]string{"gpu": "yes"}}}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourcePods: Quantity(1)}
	if gpus > 0 {
		req["nvidia.com/gpu"] = Quantity(gpus)
	}
	return Shape{Pod: pod, Requests: req, Claims: claims}
}

func head() Shape {
	pod := workload.Pod{Object: "head", Count: 1, Spec: corev1.PodSpec{NodeSelector: map[string]string{"cpu": "yes"}}}
	return Shape{Pod: pod, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("60"), corev1.ResourcePods: Quantity(1)}}
}

// racks is n racks of size GPU nodes (4 GPUs, 8 NICs each) and one CPU node.
func racks(n, size int) *Fleet {
	f := &Fleet{Drivers: map[string]string{"roce": "roce.example"}}
	for r := range n {
		for i := range size {
			f.Nodes = append(f.Nodes, node(fmt.Sprintf("r%d-n%d", r, i), map[string]string{"gpu": "yes", "rack": fmt.Sprint(r)}, 4, map[string]int64{"roce.example": 8}))
		}
	}
	f.Nodes = append(f.Nodes, node("cpu", map[string]string{"cpu": "yes"}, 0, nil))
	return f
}

func placed(rs []RunResult) [][]int64 {
	var out [][]int64
	for _, r := range rs {
		var one []int64
		for _, s := range r.Shapes {
			one = append(one, s.Placed)
		}
		out = append(out, one)
	}
	return out
}

func TestPlace(t *testing.T) {
	nic := map[string]int64{"roce": 8}
	cases := []struct {
		name  string
		fleet func() *Fleet
		runs  []Run
		want  [][]int64
		waits []bool
	}{
		{
			// Devices count per node: 12 workers claiming 8 NICs each on a
			// pool where 6 nodes have 8 and 6 have 4.
			name: "NICs on half the nodes",
			fleet: func() *Fleet {
				f := racks(1, 12)
				for i := 6; i < 12; i++ {
					f.Nodes[i].Devices["roce.example"] = 4
				}
				return f
			},
			runs:  []Run{{Name: "a", Shapes: []Shape{head(), worker("w", 12, 4, nic)}}},
			want:  [][]int64{{1, 6}},
			waits: []bool{false},
		},
		{
			// A DeviceClass with extendedResourceName serves nvidia.com/gpu
			// on nodes that do not advertise it, one device per GPU.
			name: "GPUs from a DRA extended resource",
			fleet: func() *Fleet {
				f := &Fleet{Drivers: map[string]string{"gpu": "gpu.nvidia.com"}, Extended: map[corev1.ResourceName]string{"nvidia.com/gpu": "gpu"}}
				for i := range 3 {
					f.Nodes = append(f.Nodes, node(fmt.Sprintf("n%d", i), map[string]string{"gpu": "yes"}, 0, map[string]int64{"gpu.nvidia.com": 8}))
				}
				return f
			},
			runs:  []Run{{Name: "a", Shapes: []Shape{worker("w", 4, 8, nil)}}, {Name: "b", Shapes: []Shape{worker("w", 1, 4, nil)}}},
			want:  [][]int64{{3}, {0}},
			waits: []bool{false, false},
		},
		{
			// Without a gang the second run is placed in part; as KAI's gang
			// it places nothing and the third, smaller run still fits.
			name:  "gang all or nothing",
			fleet: func() *Fleet { return racks(1, 6) },
			runs: []Run{
				{Name: "a", Shapes: []Shape{head(), worker("w", 4, 4, nic)}},
				{Name: "b", Gang: true, Shapes: []Shape{worker("w", 4, 4, nic)}},
				{Name: "c", Shapes: []Shape{worker("w", 4, 4, nic)}},
			},
			want:  [][]int64{{1, 4}, {0}, {2}},
			waits: []bool{false, true, false},
		},
		{
			// A required level keeps the gang in one rack: 6 pods fit two
			// racks of 4 free nodes, not one.
			name:  "one rack required",
			fleet: func() *Fleet { return racks(2, 4) },
			runs: []Run{
				{Name: "a", Gang: true, Required: "rack", Shapes: []Shape{worker("w", 6, 4, nic)}},
				{Name: "b", Gang: true, Required: "rack", Shapes: []Shape{worker("w", 4, 4, nic)}},
				{Name: "c", Gang: true, Required: "rack", Shapes: []Shape{worker("w", 4, 4, nic)}},
				{Name: "d", Gang: true, Required: "rack", Shapes: []Shape{worker("w", 1, 4, nic)}},
			},
			want:  [][]int64{{0}, {4}, {4}, {0}},
			waits: []bool{true, false, false, true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := c.fleet().Place(c.runs)
			assert.Equal(t, c.want, placed(rs))
			for i, r := range rs {
				assert.Equal(t, c.waits[i], r.Waits, "run %s", c.runs[i].Name)
			}
		})
	}
}

// A gang that waits gives back what its attempt took, and says how many
// would fit; Held counts the GPUs a partly placed run holds.
func TestGangGivesBack(t *testing.T) {
	f := racks(1, 3)
	rs := f.Place([]Run{{Name: "a", Gang: true, Shapes: []Shape{worker("w", 4, 4, nil)}}, {Name: "b", Shapes: []Shape{worker("w", 4, 4, nil)}}})
	assert.True(t, rs[0].Waits)
	assert.Equal(t, int64(3), rs[0].Shapes[0].Fit)
	assert.Equal(t, int64(3), rs[1].Shapes[0].Placed)
	assert.Equal(t, int64(12), rs[1].Held(Run{Shapes: []Shape{worker("w", 4, 4, nil)}}, "nvidia.com/gpu"))
	assert.Equal(t, map[string]int{"node selector or affinity does not match": 1, "not enough free nvidia.com/gpu": 3}, rs[1].Shapes[0].Why)
}
