package admission

import (
	"context"
	"fmt"
	"math"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
)

// apiDefaults is the group as KubeRay's reconciler reads it: the emitter
// drops unset pointers and a zero numOfHosts, and the API server fills in
// the CRD's defaults (ray.io_rayclusters.yaml: replicas 0, minReplicas 0,
// maxReplicas 2^31-1, numOfHosts 1).
func apiDefaults(g rayv1.WorkerGroupSpec) rayv1.WorkerGroupSpec {
	g = *g.DeepCopy()
	if g.Replicas == nil {
		g.Replicas = i32(0)
	}
	if g.MinReplicas == nil {
		g.MinReplicas = i32(0)
	}
	if g.MaxReplicas == nil {
		g.MaxReplicas = i32(math.MaxInt32)
	}
	if g.NumOfHosts == 0 {
		g.NumOfHosts = 1
	}
	return g
}

// requireKubeRayCount holds capacity.WorkerPods equal to KubeRay v1.5.0's
// GetWorkerGroupDesiredReplicas for one group. KubeRay multiplies in int32:
// where that product overflows (a count no check lets through, it is past
// capacity.MaxNodes) ours must say "over the bound" instead of wrapping.
func requireKubeRayCount(t *testing.T, what string, g rayv1.WorkerGroupSpec) {
	t.Helper()
	ours := capacity.WorkerPods(&g, false)
	d := apiDefaults(g)
	replicas := capacity.DesiredReplicas(&g)
	if product := replicas * capacity.Hosts(&g); product > math.MaxInt32 {
		require.Equal(t, int64(capacity.MaxNodes+1), ours, "%s: %d pods is past the bound", what, product)
		return
	}
	want := int64(rayutils.GetWorkerGroupDesiredReplicas(context.Background(), d))
	if want > capacity.MaxNodes {
		require.Equal(t, int64(capacity.MaxNodes+1), ours, "%s: KubeRay starts %d pods, past the bound", what, want)
		return
	}
	require.Equal(t, want, ours, "%s: KubeRay's GetWorkerGroupDesiredReplicas", what)
}

func TestWorkerPodsAreKubeRays(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		g    rayv1.WorkerGroupSpec
		want int64 // what KubeRay starts, pinned so a table entry cannot drift
	}{
		{"replicas only", rayv1.WorkerGroupSpec{Replicas: i32(4)}, 4},
		{"min 16 max 16 replicas 4 starts 16", rayv1.WorkerGroupSpec{Replicas: i32(4), MinReplicas: i32(16), MaxReplicas: i32(16)}, 16},
		{"replicas 2^31-1 with maxReplicas 4 starts 4", rayv1.WorkerGroupSpec{Replicas: i32(math.MaxInt32), MaxReplicas: i32(4)}, 4},
		{"minReplicas above maxReplicas starts maxReplicas", rayv1.WorkerGroupSpec{Replicas: i32(5), MinReplicas: i32(8), MaxReplicas: i32(3)}, 3},
		{"nothing set starts nothing", rayv1.WorkerGroupSpec{}, 0},
		{"minReplicas alone", rayv1.WorkerGroupSpec{MinReplicas: i32(2)}, 2},
		{"multi-host", rayv1.WorkerGroupSpec{Replicas: i32(3), NumOfHosts: 4}, 12},
		{"multi-host clamped", rayv1.WorkerGroupSpec{Replicas: i32(1), MinReplicas: i32(2), MaxReplicas: i32(2), NumOfHosts: 4}, 8},
		{"suspended group", rayv1.WorkerGroupSpec{Replicas: i32(4), MinReplicas: i32(4), Suspend: &yes}, 0},
		{"suspend false", rayv1.WorkerGroupSpec{Replicas: i32(4), Suspend: &no}, 4},
		{"zero maxReplicas", rayv1.WorkerGroupSpec{Replicas: i32(4), MaxReplicas: i32(0)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireKubeRayCount(t, tc.name, tc.g)
			require.Equal(t, tc.want, capacity.WorkerPods(&tc.g, false))
		})
	}
	// Every combination of small values, each field set or left to the CRD.
	vals := []*int32{nil, i32(0), i32(1), i32(2), i32(3), i32(7), i32(16), i32(math.MaxInt32)}
	for _, r := range vals {
		for _, lo := range vals {
			for _, hi := range vals {
				for _, hosts := range []int32{0, 1, 2, 8} {
					g := rayv1.WorkerGroupSpec{Replicas: r, MinReplicas: lo, MaxReplicas: hi, NumOfHosts: hosts}
					requireKubeRayCount(t, fmt.Sprintf("replicas=%v min=%v max=%v hosts=%d", show(r), show(lo), show(hi), hosts), g)
				}
			}
		}
	}
}

func show(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// The cluster's sum is KubeRay's CalculateDesiredReplicas, and a suspended
// cluster starts no worker (reconcilePods deletes them all).
func TestClusterCountIsKubeRays(t *testing.T) {
	spec := rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
		{GroupName: "a", Replicas: i32(4), MinReplicas: i32(16), MaxReplicas: i32(16)},
		{GroupName: "b", Replicas: i32(math.MaxInt32), MaxReplicas: i32(4), NumOfHosts: 2},
		{GroupName: "c", MinReplicas: i32(1)},
	}}
	defaulted := *spec.DeepCopy()
	for i := range defaulted.WorkerGroupSpecs {
		defaulted.WorkerGroupSpecs[i] = apiDefaults(defaulted.WorkerGroupSpecs[i])
	}
	want := rayutils.CalculateDesiredReplicas(context.Background(), &rayv1.RayCluster{Spec: defaulted})
	require.Equal(t, int64(want), capacity.Count(&spec).Pods)
	require.Equal(t, int64(25), capacity.Count(&spec).Pods)
	yes := true
	spec.Suspend = &yes
	require.Zero(t, capacity.Count(&spec).Pods)
	// Autoscaling is KubeRay's IsAutoscalingEnabled; its ceiling is the sum
	// of maxReplicas × numOfHosts (CalculateMaxReplicas) where that is set.
	spec.Suspend = nil
	spec.EnableInTreeAutoscaling = &yes
	require.Equal(t, rayutils.IsAutoscalingEnabled(&spec), capacity.Autoscaling(&spec))
	spec.WorkerGroupSpecs[2].MaxReplicas = i32(5)
	defaulted = *spec.DeepCopy()
	for i := range defaulted.WorkerGroupSpecs {
		defaulted.WorkerGroupSpecs[i] = apiDefaults(defaulted.WorkerGroupSpecs[i])
	}
	require.Equal(t, int64(rayutils.CalculateMaxReplicas(&rayv1.RayCluster{Spec: defaulted})), capacity.Count(&spec).MaxPods)
}

// FuzzWorkerPodsAreKubeRays: any replicas, bounds and hosts, each set or
// not.
func FuzzWorkerPodsAreKubeRays(f *testing.F) {
	f.Add(int32(4), int32(16), int32(16), int32(1), byte(7), false)
	f.Add(int32(math.MaxInt32), int32(0), int32(4), int32(0), byte(5), false)
	f.Add(int32(3), int32(9), int32(2), int32(3), byte(7), true)
	f.Fuzz(func(t *testing.T, r, lo, hi, hosts int32, set byte, suspend bool) {
		// Negative values never reach a count: the profile's validation
		// refuses them (profile.validateCounts).
		r, lo, hi, hosts = abs(r), abs(lo), abs(hi), abs(hosts)
		g := rayv1.WorkerGroupSpec{NumOfHosts: hosts, Suspend: &suspend}
		if set&1 != 0 {
			g.Replicas = &r
		}
		if set&2 != 0 {
			g.MinReplicas = &lo
		}
		if set&4 != 0 {
			g.MaxReplicas = &hi
		}
		requireKubeRayCount(t, fmt.Sprintf("replicas=%v min=%v max=%v hosts=%d suspend=%v", show(g.Replicas), show(g.MinReplicas), show(g.MaxReplicas), hosts, suspend), g)
	})
}

func abs(v int32) int32 {
	if v < 0 {
		if v == math.MinInt32 {
			return math.MaxInt32
		}
		return -v
	}
	return v
}
