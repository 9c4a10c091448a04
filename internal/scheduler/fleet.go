package scheduler

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Drivers and classes a fleet's DRA drivers publish, as the profiles name
// them: NVIDIA's GPU driver (gpu.nvidia.com) and ComputeDomain driver
// (compute-domain.nvidia.com, channels), the GB300 profiles' RoCE NICs and
// the H200 profile's InfiniBand NICs.
const (
	GPUDriver     = "gpu.nvidia.com"
	ChannelDriver = "compute-domain.nvidia.com"
	RoCEClass     = "roce.networking.k8s.aws"
	IBClass       = "ib.research.example.com"
	GPUTaint      = "nvidia.com/gpu"
)

// Node is one node of a fleet: labels, taints, what it can hold, and the
// devices its DRA drivers publish (driver → count).
type Node struct {
	Name          string
	Labels        map[string]string
	Taints        []corev1.Taint
	Allocatable   corev1.ResourceList
	Devices       map[string]int
	Unschedulable bool
}

// Fleet is nodes and the DeviceClasses their devices are asked by.
type Fleet struct {
	Nodes   []Node
	Classes []*resourcev1.DeviceClass
}

// byDriver is a DeviceClass selecting one driver's devices, as the
// drivers' Helm charts install them.
func byDriver(name, driver string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)}}},
	}}
}

func allocatable(cpu, memory string, gpus int64) corev1.ResourceList {
	l := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("4Ti"),
	}
	if gpus > 0 {
		l["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return l
}

// GB300 is NVL72 racks of 18 nodes × 4 GPUs (labelled with their
// nvidia.com/gpu.clique, tainted nvidia.com/gpu, nics RoCE NICs and one
// ComputeDomain channel each) and a CPU pool (nodeGroup: customer-cpu,
// untainted) of cpuNodes nodes, as the GB300 profiles target.
func GB300(prefix string, racks, nics, cpuNodes int) Fleet {
	f := Fleet{Classes: []*resourcev1.DeviceClass{byDriver(RoCEClass, RoCEClass), byDriver(ChannelClass, ChannelDriver)}}
	for r := range racks {
		for n := range 18 {
			f.Nodes = append(f.Nodes, Node{
				Name:        fmt.Sprintf("%s-r%d-n%02d", prefix, r, n),
				Labels:      map[string]string{"nvidia.com/gpu.product": "NVIDIA-GB300", "nvidia.com/gpu.clique": fmt.Sprintf("%s-rack%d.1", prefix, r)},
				Taints:      []corev1.Taint{{Key: GPUTaint, Effect: corev1.TaintEffectNoSchedule}},
				Allocatable: allocatable("144", "1000Gi", 4),
				Devices:     map[string]int{RoCEClass: nics, ChannelDriver: 1},
			})
		}
	}
	for n := range cpuNodes {
		f.Nodes = append(f.Nodes, Node{Name: fmt.Sprintf("%s-cpu-%d", prefix, n), Labels: map[string]string{"nodeGroup": "customer-cpu"},
			Allocatable: allocatable("192", "1500Gi", 0)})
	}
	return f
}

// EightGPU is n nodes of 8 GPUs each (product label, GPU taint) and
// cpuNodes untainted CPU nodes, as the H100, H200 and generic profiles
// target; ib > 0 publishes that many InfiniBand NICs per GPU node.
func EightGPU(prefix, product string, n, ib, cpuNodes int) Fleet {
	var f Fleet
	if ib > 0 {
		f.Classes = append(f.Classes, byDriver(IBClass, IBClass))
	}
	for i := range n {
		labels := map[string]string{}
		if product != "" {
			labels["nvidia.com/gpu.product"] = product
		}
		node := Node{Name: fmt.Sprintf("%s-gpu-%02d", prefix, i), Labels: labels,
			Taints: []corev1.Taint{{Key: GPUTaint, Effect: corev1.TaintEffectNoSchedule}}, Allocatable: allocatable("192", "2000Gi", 8)}
		if ib > 0 {
			node.Devices = map[string]int{IBClass: ib}
		}
		f.Nodes = append(f.Nodes, node)
	}
	for i := range cpuNodes {
		f.Nodes = append(f.Nodes, Node{Name: fmt.Sprintf("%s-cpu-%d", prefix, i), Allocatable: allocatable("64", "256Gi", 0)})
	}
	return f
}

// WithDevices has every GPU node of the fleet publish n devices of driver,
// asked for by a DeviceClass of the same name: a claim class a run names
// that no target above publishes (a test profile's own NIC class).
func (f Fleet) WithDevices(driver string, n int) Fleet {
	f.Classes = append(f.Classes, byDriver(driver, driver))
	for i := range f.Nodes {
		if _, gpu := f.Nodes[i].Allocatable["nvidia.com/gpu"]; !gpu {
			continue
		}
		devices := map[string]int{driver: n}
		for k, v := range f.Nodes[i].Devices {
			devices[k] = v
		}
		f.Nodes[i].Devices = devices
	}
	return f
}

// CPUPool is n untainted CPU nodes with labels.
func CPUPool(prefix string, n int, labels map[string]string) Fleet {
	var f Fleet
	for i := range n {
		f.Nodes = append(f.Nodes, Node{Name: fmt.Sprintf("%s-cpu-%d", prefix, i), Labels: labels, Allocatable: allocatable("192", "1500Gi", 0)})
	}
	return f
}

// Create makes the fleet in the cluster: DeviceClasses (kept if present),
// Nodes Ready with their taints, and one ResourceSlice per node and driver.
// The API server taints a new Node node.kubernetes.io/not-ready
// (TaintNodesByCondition admission, plugin/pkg/admission/nodetaint); standing
// in for the node lifecycle controller, the Node is created Ready (its
// status kept on create, as a kubelet registers it) and updated to only its
// own taints. Nodes are made createWorkers at a time: a 1,000-node fleet is
// 4,000 requests, each a round trip. The returned function deletes the nodes
// and slices.
func Create(ctx context.Context, env *operator.Env, f Fleet) (func(), error) {
	c := env.Client
	for _, dc := range f.Classes {
		if err := c.Create(ctx, dc.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	var (
		mu   sync.Mutex
		made []client.Object
	)
	cleanup := func() {
		_ = each(len(made), func(i int) error { return c.Delete(context.Background(), made[i]) }) // gone already: nothing to delete
	}
	err := each(len(f.Nodes), func(i int) error {
		objs, err := createNode(ctx, c, f.Nodes[i])
		mu.Lock()
		made = append(made, objs...)
		mu.Unlock()
		return err
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// createWorkers is how many requests Create and its cleanup have in flight.
const createWorkers = 16

// each calls fn(0..n-1), createWorkers at a time, and returns the first
// error (the rest still run).
func each(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  = make(chan int)
	)
	for range min(createWorkers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// createNode creates n Ready with its taints, and its ResourceSlices; it
// returns what it made, also on an error.
func createNode(ctx context.Context, c client.Client, n Node) ([]client.Object, error) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Status: corev1.NodeStatus{Capacity: n.Allocatable, Allocatable: n.Allocatable,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}}
	if err := c.Create(ctx, node); err != nil {
		return nil, err
	}
	made := []client.Object{node}
	node.Spec.Taints, node.Spec.Unschedulable = n.Taints, n.Unschedulable
	if err := c.Update(ctx, node); err != nil {
		return made, err
	}
	for driver, count := range n.Devices {
		var devices []resourcev1.Device
		for i := range count {
			devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("dev-%d", i)})
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-" + sanitize(driver)},
			Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(n.Name),
				Pool: resourcev1.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1}, Devices: devices}}
		if err := c.Create(ctx, slice); err != nil {
			return made, err
		}
		made = append(made, slice)
	}
	return made, nil
}

// sanitize makes a driver name part of an object name.
func sanitize(driver string) string {
	out := []byte(driver)
	for i, b := range out {
		if b == '/' || b == '_' {
			out[i] = '-'
		}
	}
	return string(out)
}

// ClusterDay is a shared cluster shaped like the issue-47 target: racks
// NVL72 racks of perRack GB300 nodes (each labelled with its rack's
// nvidia.com/gpu.clique, tainted, 4 GPUs, 8 RoCE NICs, one ComputeDomain
// channel), cpu untainted CPU nodes (nodeGroup: customer-cpu) and h100
// tainted 8-GPU H100 nodes. ClusterDay("day", 250, 4, 40, 100) is 1,140
// nodes.
func ClusterDay(prefix string, racks, perRack, cpu, h100 int) Fleet {
	f := Fleet{Classes: []*resourcev1.DeviceClass{byDriver(RoCEClass, RoCEClass), byDriver(ChannelClass, ChannelDriver)}}
	for r := range racks {
		for n := range perRack {
			f.Nodes = append(f.Nodes, Node{
				Name:        fmt.Sprintf("%s-r%03d-n%d", prefix, r, n),
				Labels:      map[string]string{"nvidia.com/gpu.product": "NVIDIA-GB300", "nvidia.com/gpu.clique": fmt.Sprintf("%s-rack%03d.1", prefix, r)},
				Taints:      []corev1.Taint{{Key: GPUTaint, Effect: corev1.TaintEffectNoSchedule}},
				Allocatable: allocatable("144", "1000Gi", 4),
				Devices:     map[string]int{RoCEClass: 8, ChannelDriver: 1},
			})
		}
	}
	f.Nodes = append(f.Nodes, CPUPool(prefix, cpu, map[string]string{"nodeGroup": "customer-cpu"}).Nodes...)
	f.Nodes = append(f.Nodes, EightGPU(prefix+"-h100", "NVIDIA-H100-80GB-HBM3", h100, 0, 0).Nodes...)
	return f
}
