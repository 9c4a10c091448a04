// Package capacity is the one home of the arithmetic that turns a Ray
// cluster spec into pods, nodes and GPUs: how KubeRay counts a worker group
// (replicas × numOfHosts, none while suspended), where a pod's GPUs are
// read from, and the bounds that keep every sum far from overflow. The
// checks, the builder, `nrl-k8s check`'s summary, the review summary and
// the chart's generated capacity data all use it.
package capacity

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// Upper bounds on what one cluster may ask for: far above any real cluster
// (the largest GB300 deployments have a few thousand nodes), low enough that
// no sum over them overflows and a render never builds millions of objects
// (`segmentSize: 1` with 2^31 replicas would). check reports them; the
// builder refuses them too, so no entry point can get past them.
const (
	// MaxNodes bounds replicas × numOfHosts summed over a cluster's worker groups.
	MaxNodes = 100_000
	// MaxWorkerGroups bounds a cluster's worker groups after segment splitting.
	MaxWorkerGroups = 1_000
	// maxGPUsPerPod caps a pod's GPU sum: no node has more.
	maxGPUsPerPod = 1 << 20
)

// WorkerPods is what KubeRay creates for a group: replicas (CRD default 0)
// × numOfHosts (CRD default 1), none while the group or its cluster is
// suspended; capped at MaxNodes+1.
func WorkerPods(g *rayv1.WorkerGroupSpec, clusterSuspended bool) int64 {
	if clusterSuspended || (g.Suspend != nil && *g.Suspend) || g.Replicas == nil || *g.Replicas <= 0 {
		return 0
	}
	hosts := int64(g.NumOfHosts)
	if hosts <= 0 {
		hosts = 1
	}
	return Mul(int64(*g.Replicas), hosts, MaxNodes)
}

// GPUsPerPod is the nvidia.com/gpu a pod asks for: each container's limit,
// else its request; found is false when no container names the resource.
func GPUsPerPod(spec *corev1.PodSpec) (total int64, found bool) {
	for _, c := range spec.Containers {
		q, ok := c.Resources.Limits["nvidia.com/gpu"]
		if !ok {
			q, ok = c.Resources.Requests["nvidia.com/gpu"]
		}
		if ok {
			if v := q.Value(); v > 0 && total < maxGPUsPerPod {
				total = min(total+v, maxGPUsPerPod)
			}
			found = true
		}
	}
	return total, found
}

// Add adds non-negative counts; a sum over limit is limit+1, so a caller
// reports "over the bound" instead of a wrapped number.
func Add(a, b, limit int64) int64 {
	if a > limit || b > limit || a+b > limit {
		return limit + 1
	}
	return a + b
}

// Mul multiplies non-negative counts the same way.
func Mul(a, b, limit int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > limit || b > limit || a > limit/b {
		return limit + 1
	}
	return a * b
}
