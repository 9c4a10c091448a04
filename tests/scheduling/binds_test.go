package scheduling_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// Every shipped profile and every golden run binds: on one fleet holding
// every target at once (GB300 NVL72 racks with their CPU pool, 8-GPU
// H100, H200 with InfiniBand, and product-less 8-GPU nodes for the generic
// and kind profiles), the scheduler binds every Pod KubeRay creates, every
// DRA claim is allocated, GPU workers land on GPU nodes of the product
// they select, and the GB300 heads on the CPU pool.
func TestEveryRunBinds(t *testing.T) {
	env, s := scheduler.Shared(t)
	ctx := context.Background()
	var runs []fixtures.Run
	for _, p := range fixtures.Shipped(t) {
		runs = append(runs, renderRun(t, p, "shipped-"+p.Name))
	}
	runs = append(runs, goldenRuns(t)...)
	want := map[string]int{}
	for _, r := range runs {
		_, byProduct := expectedPods(t, r.Objs)
		for k, v := range byProduct {
			want[k] += v
		}
	}
	// Every run is applied at once, and a GPU worker that selects no
	// product may land on any pool: each pool has room for all of those
	// besides its own runs.
	slack := want[""]
	fleets := []scheduler.Fleet{
		scheduler.GB300("all", racksFor(want["NVIDIA-GB300"]+slack), 8, len(runs)),
		scheduler.EightGPU("all-h100", "NVIDIA-H100-80GB-HBM3", want["NVIDIA-H100-80GB-HBM3"]+slack, 0, 0),
		scheduler.EightGPU("all-h200", "NVIDIA-H200", want["NVIDIA-H200"]+slack, 8, 0),
		scheduler.EightGPU("all-any", "", want[""]+slack, 0, 0),
		// The test profiles' CPU pool (nodeGroup: cpu).
		scheduler.CPUPool("all-test", 2, map[string]string{"nodeGroup": "cpu"}),
	}
	// A claim class only the golden test profiles name (their own NIC
	// class): published by every GPU node.
	for class, count := range extraClasses(t, runs) {
		for i := 0; i <= 3; i++ {
			// Room for two pods on an 8-GPU node.
			fleets[i] = fleets[i].WithDevices(class, 2*count)
		}
	}
	begin := time.Now()
	nodes := 0
	for _, f := range fleets {
		cleanup, err := scheduler.Create(ctx, env, f)
		require.NoError(t, err)
		t.Cleanup(cleanup)
		nodes += len(f.Nodes)
	}
	t.Logf("%d nodes created in %s", nodes, time.Since(begin).Round(time.Millisecond))
	begin = time.Now()
	for _, r := range runs {
		apply(t, env, namespaceFor(r.Name), r.Objs)
	}
	t.Logf("%d runs applied in %s", len(runs), time.Since(begin).Round(time.Millisecond))
	for _, r := range runs {
		t.Run(r.Name, func(t *testing.T) {
			ns := namespaceFor(r.Name)
			defer scheduler.Teardown(env, ns)
			total, _ := expectedPods(t, r.Objs)
			_, err := scheduler.Pods(context.Background(), env, ns, total, bindTimeout)
			require.NoError(t, err)
			bound := waitScheduled(t, env, s, ns, total, 0)
			requirePlaced(t, env, bound)
		})
	}
}

// requirePlaced: a GPU worker is on a node with the product it selects and
// GPUs, a head that selects the CPU pool is there, and every claim of a
// bound Pod is allocated.
func requirePlaced(t *testing.T, env *operator.Env, pods []corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	for _, p := range pods {
		var node corev1.Node
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node))
		for k, v := range p.Spec.NodeSelector {
			require.Equal(t, v, node.Labels[k], "Pod %s on node %s: selector %s", p.Name, node.Name, k)
		}
		if gpus := p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; !gpus.IsZero() {
			have := node.Status.Allocatable["nvidia.com/gpu"]
			require.False(t, have.IsZero(), "GPU Pod %s on node %s without GPUs", p.Name, node.Name)
		}
		if p.Labels["ray.io/node-type"] == "head" && p.Spec.NodeSelector["nodeGroup"] == "customer-cpu" {
			require.True(t, strings.Contains(node.Name, "-cpu-"), "head %s on %s, not the CPU pool", p.Name, node.Name)
		}
		for _, st := range p.Status.ResourceClaimStatuses {
			var claim resourcev1.ResourceClaim
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: *st.ResourceClaimName}, &claim))
			require.NotNil(t, claim.Status.Allocation, "claim %s of Pod %s is not allocated", claim.Name, p.Name)
		}
		require.Len(t, p.Status.ResourceClaimStatuses, len(p.Spec.ResourceClaims), "Pod %s: every claim made", p.Name)
	}
}

// extraClasses are the device classes the runs' claim templates ask that
// no target fleet publishes, with the most devices one claim asks.
func extraClasses(t *testing.T, runs []fixtures.Run) map[string]int {
	t.Helper()
	known := map[string]bool{scheduler.RoCEClass: true, scheduler.IBClass: true, scheduler.ChannelClass: true}
	out := map[string]int{}
	for _, r := range runs {
		for _, u := range r.Objs {
			if u.GetKind() != "ResourceClaimTemplate" {
				continue
			}
			rct := fixtures.Typed[resourcev1.ResourceClaimTemplate](t, u.Object)
			for _, req := range rct.Spec.Spec.Devices.Requests {
				if req.Exactly == nil || known[req.Exactly.DeviceClassName] {
					continue
				}
				out[req.Exactly.DeviceClassName] = max(out[req.Exactly.DeviceClassName], int(max(req.Exactly.Count, 1)))
			}
		}
	}
	return out
}
