// Package capacity is the one home of the arithmetic that turns a Ray
// cluster spec into pods, nodes and GPUs, counted as KubeRay v1.5.0 counts
// them: a worker group's pods are its replicas clamped to
// [minReplicas, maxReplicas] × numOfHosts (utils.GetWorkerGroupDesiredReplicas),
// none while the group or the cluster is suspended; with in-tree
// autoscaling the autoscaler may grow a group up to maxReplicas, which is
// reported beside the count, never as it. A pod's GPUs are what the
// scheduler reserves for it, read from every container. The bounds keep
// every sum far from overflow. The checks, the builder (segment splitting),
// `nrl-k8s check`'s summary, the review summary (`nrl-k8s diff`) and the
// chart's generated capacity data all use it.
//
// KubeRay's function is not linked here (its package's init costs every
// process ~11 ms, docs/performance.md): tests/admission holds DesiredReplicas
// equal to it over a table of shapes and a fuzz corpus.
package capacity

import (
	"math"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// Upper bounds on what one cluster may ask for: far above any real cluster
// (the largest GB300 deployments have a few thousand nodes), low enough that
// no sum over them overflows and a render never builds millions of objects
// (`segmentSize: 1` with 2^31 replicas would). check reports them; the
// builder refuses them too, so no entry point can get past them.
const (
	// MaxNodes bounds the worker pods KubeRay would start for a cluster.
	MaxNodes = 100_000
	// MaxWorkerGroups bounds a cluster's worker groups after segment splitting.
	MaxWorkerGroups = 1_000
	// maxGPUsPerPod caps a pod's GPU sum: no node has more.
	maxGPUsPerPod = 1 << 20
	// gpuSumLimit caps GPU totals (pods × GPUs per pod).
	gpuSumLimit = math.MaxInt64 / 2
)

// GPUResource is the extended resource NVIDIA's device plugin advertises.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// The CRD defaults the API server fills in for fields a manifest leaves
// out (ray.io_rayclusters.yaml): a profile decoded into the Go types has
// nil pointers and a zero numOfHosts for them, and the emitter drops them,
// so the API server's defaults are what KubeRay reads.
const (
	defaultMinReplicas = 0
	defaultMaxReplicas = math.MaxInt32
	defaultReplicas    = 0
	defaultNumOfHosts  = 1
)

// DesiredReplicas is the replica count KubeRay's reconciler aims a group at
// (GetWorkerGroupDesiredReplicas before its × numOfHosts): 0 while the
// group is suspended; maxReplicas when minReplicas exceeds it; else
// replicas clamped to [minReplicas, maxReplicas]. Unset fields take the
// CRD's defaults (replicas 0, minReplicas 0, maxReplicas 2^31-1).
// Negative values, which the profile's validation refuses, give 0.
func DesiredReplicas(g *rayv1.WorkerGroupSpec) int64 {
	if g.Suspend != nil && *g.Suspend {
		return 0
	}
	lo, hi, r := int64(defaultMinReplicas), int64(defaultMaxReplicas), int64(defaultReplicas)
	if g.MinReplicas != nil {
		lo = int64(*g.MinReplicas)
	}
	if g.MaxReplicas != nil {
		hi = int64(*g.MaxReplicas)
	}
	if g.Replicas != nil {
		r = int64(*g.Replicas)
	}
	var n int64
	switch {
	case lo > hi:
		n = hi
	case r < lo:
		n = lo
	case r > hi:
		n = hi
	default:
		n = r
	}
	return max(n, 0)
}

// Hosts is a group's pods per replica: numOfHosts, 1 when unset (the CRD's
// default; the emitter drops a zero, so 0 in a profile means unset).
func Hosts(g *rayv1.WorkerGroupSpec) int64 {
	if g.NumOfHosts <= 0 {
		return defaultNumOfHosts
	}
	return int64(g.NumOfHosts)
}

// WorkerPods is what KubeRay creates for a group: DesiredReplicas ×
// numOfHosts, none while the group or its cluster is suspended; capped at
// MaxNodes+1 (KubeRay multiplies in int32 and would wrap: every count past
// the bound is refused before it matters).
func WorkerPods(g *rayv1.WorkerGroupSpec, clusterSuspended bool) int64 {
	if clusterSuspended {
		return 0
	}
	return Mul(DesiredReplicas(g), Hosts(g), MaxNodes)
}

// MaxWorkerPods is the most pods the group can have: with in-tree
// autoscaling, maxReplicas × numOfHosts (the autoscaler scales within
// [minReplicas, maxReplicas]; the CRD's default maxReplicas 2^31-1 is
// MaxNodes+1 here, "no ceiling"); without it, WorkerPods.
func MaxWorkerPods(g *rayv1.WorkerGroupSpec, autoscaling, clusterSuspended bool) int64 {
	pods := WorkerPods(g, clusterSuspended)
	if !autoscaling || clusterSuspended || (g.Suspend != nil && *g.Suspend) {
		return pods
	}
	hi := int64(defaultMaxReplicas)
	if g.MaxReplicas != nil {
		hi = max(int64(*g.MaxReplicas), 0)
	}
	return max(pods, Mul(hi, Hosts(g), MaxNodes))
}

// Autoscaling reports whether KubeRay runs the in-tree autoscaler for the
// cluster (utils.IsAutoscalingEnabled).
func Autoscaling(spec *rayv1.RayClusterSpec) bool {
	return spec != nil && spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling
}

// Suspended reports whether the whole cluster is suspended (no pods).
func Suspended(spec *rayv1.RayClusterSpec) bool {
	return spec != nil && spec.Suspend != nil && *spec.Suspend
}

// GPUsPerPod is the nvidia.com/gpu the scheduler reserves for a pod, read
// from every container: per container its limit, else its request (for an
// extended resource the two are equal when both are set); the regular
// containers and the sidecars (restartable init containers) add up, and an
// ordinary init container, which runs alone before them, counts when it
// asks for more (with the sidecars started before it), as the scheduler's
// effective request does. found is false when no container names the
// resource.
func GPUsPerPod(spec *corev1.PodSpec) (total int64, found bool) {
	var sidecars, initPeak int64
	for _, c := range spec.InitContainers {
		n, ok := containerGPUs(&c)
		found = found || ok
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = min(sidecars+n, maxGPUsPerPod)
			continue
		}
		initPeak = max(initPeak, min(sidecars+n, maxGPUsPerPod))
	}
	total = sidecars
	for _, c := range spec.Containers {
		n, ok := containerGPUs(&c)
		found = found || ok
		total = min(total+n, maxGPUsPerPod)
	}
	return max(total, initPeak), found
}

func containerGPUs(c *corev1.Container) (int64, bool) {
	q, ok := c.Resources.Limits[GPUResource]
	if !ok {
		q, ok = c.Resources.Requests[GPUResource]
	}
	if !ok {
		return 0, false
	}
	return min(max(q.Value(), 0), maxGPUsPerPod), true
}

// Group is one worker group's count.
type Group struct {
	// Index is the group's place in workerGroupSpecs; Name its groupName.
	Index int
	Name  string
	// Replicas is DesiredReplicas; Hosts numOfHosts (1 when unset).
	Replicas int64
	Hosts    int64
	// Pods is what KubeRay starts (WorkerPods); MaxPods the autoscaling
	// ceiling (MaxWorkerPods, equal to Pods without autoscaling).
	Pods    int64
	MaxPods int64
	// GPUsPerPod is GPUsPerPod of the group's template; RequestsGPU whether
	// any of its containers names nvidia.com/gpu.
	GPUsPerPod  int64
	RequestsGPU bool
}

// GPU reports whether the group's pods hold GPUs: the GPU nodes a recipe's
// cluster.* keys are checked against (CPU groups give none).
func (g Group) GPU() bool { return g.GPUsPerPod > 0 }

// Cluster is a Ray cluster's count.
type Cluster struct {
	Groups      []Group
	Autoscaling bool
	Suspended   bool
	// Pods and MaxPods sum the worker groups (capped at MaxNodes+1, "over
	// the bound"); GPUNodes, MaxGPUNodes, GPUs and MaxGPUs sum the groups
	// whose pods hold GPUs. The head is not counted.
	Pods, MaxPods         int64
	GPUNodes, MaxGPUNodes int64
	GPUs, MaxGPUs         int64
}

// Count counts a cluster spec's worker groups; a nil spec counts nothing.
func Count(spec *rayv1.RayClusterSpec) Cluster {
	var c Cluster
	if spec == nil {
		return c
	}
	c.Autoscaling, c.Suspended = Autoscaling(spec), Suspended(spec)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		per, found := GPUsPerPod(&g.Template.Spec)
		gr := Group{
			Index: i, Name: g.GroupName, Replicas: DesiredReplicas(g), Hosts: Hosts(g),
			Pods: WorkerPods(g, c.Suspended), MaxPods: MaxWorkerPods(g, c.Autoscaling, c.Suspended),
			GPUsPerPod: per, RequestsGPU: found,
		}
		c.Groups = append(c.Groups, gr)
		c.Pods = Add(c.Pods, gr.Pods, MaxNodes)
		c.MaxPods = Add(c.MaxPods, gr.MaxPods, MaxNodes)
		if gr.GPU() {
			c.GPUNodes = Add(c.GPUNodes, gr.Pods, MaxNodes)
			c.MaxGPUNodes = Add(c.MaxGPUNodes, gr.MaxPods, MaxNodes)
			c.GPUs = Add(c.GPUs, Mul(gr.Pods, per, gpuSumLimit), gpuSumLimit)
			c.MaxGPUs = Add(c.MaxGPUs, Mul(gr.MaxPods, per, gpuSumLimit), gpuSumLimit)
		}
	}
	return c
}

// GPUGroups is the groups whose pods hold GPUs.
func (c Cluster) GPUGroups() []Group {
	var out []Group
	for _, g := range c.Groups {
		if g.GPU() {
			out = append(out, g)
		}
	}
	return out
}

// OverBound reports whether the cluster starts more than MaxNodes pods
// (its sums stopped at the bound).
func (c Cluster) OverBound() bool { return c.Pods > MaxNodes }

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
