package scheduling_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// What the real scheduler does with our output where check and preflight
// now warn (one test per finding). Each test has a fleet of its own and
// removes it, and its run's Pods, when it ends.

// onFleet creates f, applies r into its own namespace, and removes both at
// the end of the test.
func onFleet(t *testing.T, env *operator.Env, f scheduler.Fleet, r fixtures.Run) string {
	t.Helper()
	cleanup, err := scheduler.Create(context.Background(), env, f)
	require.NoError(t, err)
	ns := namespaceFor(t.Name())
	t.Cleanup(func() { scheduler.Teardown(env, ns); cleanup() })
	apply(t, env, ns, r.Objs)
	return ns
}

func qwen(t *testing.T, name string, overrides ...string) fixtures.Run {
	t.Helper()
	return renderRun(t, fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu"), name, overrides...)
}

func reasons(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		if r := scheduler.UnschedulableReason(p); r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "\n")
}

func TestSchedulingFindings(t *testing.T) {
	env, s := scheduler.Shared(t)

	// The RoCE claim asks 8 NICs (dra.roce.count's default) while the
	// qwen3 profile's nodes have 4: every worker stays Pending.
	t.Run("NIC count over what a node has", func(t *testing.T) {
		ns := onFleet(t, env, scheduler.GB300("nic4", 1, 4, 1), qwen(t, "nic4"))
		pods := waitScheduled(t, env, s, ns, 5, 4)
		require.Contains(t, reasons(pods), "cannot allocate all claims")
	})

	// The same run with the claim's count at the node's 4 binds.
	t.Run("NIC count the node has", func(t *testing.T) {
		ns := onFleet(t, env, scheduler.GB300("nic4ok", 1, 4, 1), qwen(t, "nic4ok", "infra.dra.roce.count=4"))
		waitScheduled(t, env, s, ns, 5, 0)
	})

	// Only NVIDIA's GPU DRA driver publishes GPUs (no device plugin
	// capacity): the workers' nvidia.com/gpu requests stay Pending until the
	// GPU DeviceClass declares extendedResourceName: nvidia.com/gpu.
	t.Run("GPUs from DRA only", func(t *testing.T) { gpusFromDRAOnly(t, env, s) })

	// {operator: Exists} without a key (the GB300 workers) tolerates the
	// cordon taint: with 16 of 18 nodes cordoned, all four workers bind,
	// onto cordoned nodes.
	t.Run("key-less Exists tolerates cordon", func(t *testing.T) {
		f := scheduler.GB300("cordon", 1, 8, 1)
		for i := range f.Nodes {
			if strings.Contains(f.Nodes[i].Name, "-r0-n") && !strings.HasSuffix(f.Nodes[i].Name, "n00") && !strings.HasSuffix(f.Nodes[i].Name, "n01") {
				f.Nodes[i].Unschedulable = true
			}
		}
		ns := onFleet(t, env, f, qwen(t, "cordon"))
		pods := waitScheduled(t, env, s, ns, 5, 0)
		cordoned := 0
		for _, p := range pods {
			if strings.Contains(p.Spec.NodeName, "-r0-n") && !strings.HasSuffix(p.Spec.NodeName, "n00") && !strings.HasSuffix(p.Spec.NodeName, "n01") {
				cordoned++
			}
		}
		require.GreaterOrEqual(t, cordoned, 2, "at most 2 of 4 workers fit on the 2 nodes not cordoned")
	})

	// Topology: the qwen3 profile's four one-pod segments each carry the
	// clique constraint on their own template, and nothing keeps the four
	// in one clique. With only two free GPU nodes in each rack, the
	// scheduler (as KAI, which reads each template as its group's own
	// constraint) puts them in two racks, across the one ComputeDomain:
	// every pod binds, which a constraint on the whole gang would refuse.
	// (With a rack of free nodes the scheduler may or may not split them;
	// two free nodes a rack make the split the only placement.)
	t.Run("one-pod segments split across racks", func(t *testing.T) { segmentsSplitAcrossRacks(t, env, s) })

	// No gang without KAI: ultra 64n on 3 NVL72 racks (54 GPU nodes), its
	// pods placed one by one: 54 workers bind and hold 216 GPUs, 10 wait.
	t.Run("no gang: partial placement holds GPUs", func(t *testing.T) {
		ns := onFleet(t, env, scheduler.GB300("gang", 3, 8, 1), renderRun(t, fixtures.ShippedProfile(t, "gb300-ultra-64n-pipeclean"), "gang"))
		pods := waitScheduled(t, env, s, ns, 65, 10)
		require.Contains(t, reasons(pods), "Insufficient nvidia.com/gpu")
	})

	// A head without a node selector or toleration (the H100 profile's)
	// never schedules on a cluster of tainted GPU nodes only.
	t.Run("head on an all-GPU cluster", func(t *testing.T) {
		ns := onFleet(t, env, scheduler.EightGPU("allgpu", "NVIDIA-H100-80GB-HBM3", 2, 0, 0), renderRun(t, fixtures.ShippedProfile(t, "h100-nfs-2n8g"), "allgpu"))
		pods := waitScheduled(t, env, s, ns, 3, 1)
		require.Contains(t, reasons(pods), "untolerated taint")
	})
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// gpusFromDRAOnly: the workers stay Pending on GPUs only the DRA driver
// publishes, then bind once the DeviceClass names nvidia.com/gpu.
func gpusFromDRAOnly(t *testing.T, env *operator.Env, s *scheduler.Scheduler) {
	f := scheduler.EightGPU("dragpu", "NVIDIA-H100-80GB-HBM3", 2, 0, 1)
	for i := range f.Nodes {
		if _, gpu := f.Nodes[i].Allocatable["nvidia.com/gpu"]; gpu {
			delete(f.Nodes[i].Allocatable, "nvidia.com/gpu")
			f.Nodes[i].Devices = map[string]int{scheduler.GPUDriver: 8}
		}
	}
	class := "gpu.nvidia.com"
	f.Classes = append(f.Classes, &resourcev1.DeviceClass{ObjectMeta: objectMeta(class), Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + scheduler.GPUDriver + `"`}}}}})
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &resourcev1.DeviceClass{ObjectMeta: objectMeta(class)})
	})
	ns := onFleet(t, env, f, renderRun(t, fixtures.ShippedProfile(t, "h100-nfs-2n8g"), "dragpu"))
	pods := waitScheduled(t, env, s, ns, 3, 2)
	require.Contains(t, reasons(pods), "Insufficient nvidia.com/gpu")

	var dc resourcev1.DeviceClass
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: class}, &dc))
	dc.Spec.ExtendedResourceName = ptr.To("nvidia.com/gpu")
	require.NoError(t, env.Client.Update(context.Background(), &dc))
	waitScheduled(t, env, s, ns, 3, 0)
}

// segmentsSplitAcrossRacks: with two free GPU nodes a rack, the four
// one-pod segments of one ComputeDomain bind in two NVLink domains.
func segmentsSplitAcrossRacks(t *testing.T, env *operator.Env, s *scheduler.Scheduler) {
	f := scheduler.GB300("topo", 2, 8, 1)
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if strings.Contains(n.Name, "-r") && strings.Contains(n.Name, "-n") && !strings.HasSuffix(n.Name, "n00") && !strings.HasSuffix(n.Name, "n01") {
			n.Allocatable = n.Allocatable.DeepCopy()
			delete(n.Allocatable, "nvidia.com/gpu") // its GPUs are in use
		}
	}
	ns := onFleet(t, env, f, qwen(t, "topo"))
	pods := waitScheduled(t, env, s, ns, 5, 0)
	cliques := map[string]bool{}
	for _, p := range pods {
		if p.Labels["ray.io/node-type"] != "worker" {
			continue
		}
		var node corev1.Node
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &node))
		cliques[node.Labels["nvidia.com/gpu.clique"]] = true
	}
	require.Len(t, cliques, 2, "the four workers of one ComputeDomain in two NVLink domains: %v", cliques)
}
