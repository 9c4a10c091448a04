package scheduling_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// Placement scenarios where preflight --nodes, asked before apply, must
// say what the real scheduler then does, run by run: for each pod group of
// each run, as many pods bound as preflight said would be placed. The
// scheduler here places kai-scheduler Pods as the default scheduler does
// (no gang), so the runs are taken off KAI (placement.go's gang is held
// by its unit tests).
func TestPreflightAgreesWithScheduler(t *testing.T) {
	env, s := scheduler.Shared(t)

	// GPUs only a DRA driver publishes, its DeviceClass declaring
	// extendedResourceName: nvidia.com/gpu: the scheduler serves the
	// workers' nvidia.com/gpu from the class's devices.
	t.Run("GPUs from a DRA extendedResourceName", func(t *testing.T) {
		f := scheduler.EightGPU("pfext", "NVIDIA-H100-80GB-HBM3", 2, 0, 1)
		for i := range f.Nodes {
			if _, gpu := f.Nodes[i].Allocatable["nvidia.com/gpu"]; gpu {
				delete(f.Nodes[i].Allocatable, "nvidia.com/gpu")
				f.Nodes[i].Devices = map[string]int{scheduler.GPUDriver: 8}
			}
		}
		class := "gpu-ext.nvidia.com"
		f.Classes = append(f.Classes, &resourcev1.DeviceClass{ObjectMeta: objectMeta(class), Spec: resourcev1.DeviceClassSpec{
			ExtendedResourceName: ptr.To("nvidia.com/gpu"),
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + scheduler.GPUDriver + `"`}}}}})
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &resourcev1.DeviceClass{ObjectMeta: objectMeta(class)})
		})
		fleet(t, env, f)
		run := h100(t, "pfext")
		rep := predict(t, env, run)
		applyAndCompare(t, env, s, rep, run)
	})

	// The same GPUs under KAI's gang: the qwen3 GB300 run, its pods
	// naming KAI, on GB300 nodes whose GPUs only the DRA driver publishes.
	// Preflight places the gang on the class's devices, and the scheduler
	// binds every pod.
	t.Run("KAI gang on GPUs from a DRA extendedResourceName", func(t *testing.T) { kaiGangOnDRAGPUs(t, env, s) })

	// Half of 12 GB300 nodes publish 8 RoCE NICs, half 4; each worker
	// claims 8 on its own node: 6 of 12 workers can be placed, not all 12
	// because some node has 8.
	t.Run("NICs on half the nodes", func(t *testing.T) {
		f := scheduler.GB300("pfnic", 1, 4, 1)
		var pool []scheduler.Node
		for i, n := range f.Nodes {
			switch {
			case n.Devices == nil:
				pool = append(pool, n) // the CPU node
			case i < 6:
				n.Devices = map[string]int{scheduler.RoCEClass: 8, scheduler.ChannelDriver: 1}
				pool = append(pool, n)
			case i < 12:
				pool = append(pool, n)
			}
		}
		f.Nodes = pool // 12 GPU nodes: 6 with 8 NICs, 6 with 4
		fleet(t, env, f)
		run := ultra(t, "pfnic", 12)
		rep := predict(t, env, run)
		assertPlaced(t, rep, "RayJob/pfnic worker group gpu-workers-segment-0", 6)
		applyAndCompare(t, env, s, rep, run)
	})

	// Two runs in two namespaces, asked in one input before either is
	// applied, then the second asked again once the first runs: the first
	// takes two of three GPU nodes, so the second gets one worker of two,
	// whose 8 GPUs are held while its other worker waits.
	t.Run("a second run beside the first", func(t *testing.T) {
		fleet(t, env, scheduler.EightGPU("pftwo", "NVIDIA-H100-80GB-HBM3", 3, 0, 2))
		a, b := h100(t, "pftwo-a"), h100(t, "pftwo-b")
		both := predict(t, env, a, b)
		assertPlaced(t, both, "RayJob/pftwo-b worker group h100", 1)
		applyAndCompare(t, env, s, both, a)
		alone := predict(t, env, b)
		assertFinding(t, alone, "RayJob/pftwo-b", "8 nvidia.com/gpu")
		applyAndCompare(t, env, s, alone, b)
	})

	// DRA claims already allocated are not free: the first run's workers
	// hold every node's 8 NICs, so the second run's workers, for which
	// GPUs are left, stay Pending ("cannot allocate all claims").
	t.Run("NICs a running run holds", func(t *testing.T) { nicsHeld(t, env, s) })

	// One CPU node with room for one head: the second run's head waits
	// while its two workers bind and hold 16 GPUs.
	t.Run("two heads for one CPU node", func(t *testing.T) {
		f := scheduler.EightGPU("pfhead", "NVIDIA-H100-80GB-HBM3", 4, 0, 1)
		for i := range f.Nodes {
			if strings.Contains(f.Nodes[i].Name, "-cpu-") {
				f.Nodes[i].Allocatable = f.Nodes[i].Allocatable.DeepCopy()
				f.Nodes[i].Allocatable[corev1.ResourceCPU] = resource.MustParse("6")
			}
		}
		fleet(t, env, f)
		a, b := h100(t, "pfhead-a"), h100(t, "pfhead-b")
		applyAndCompare(t, env, s, predict(t, env, a), a)
		rep := predict(t, env, b)
		assertPlaced(t, rep, "RayJob/pfhead-b head", 0)
		assertFinding(t, rep, "RayJob/pfhead-b", "16 nvidia.com/gpu")
		applyAndCompare(t, env, s, rep, b)
	})
}

// kaiGangOnDRAGPUs: the qwen3 GB300 run, its pods naming KAI (one gang),
// on GB300 nodes whose GPUs only the DRA driver publishes, served through
// a DeviceClass's extendedResourceName: preflight places every pod, as the
// scheduler binds them.
func kaiGangOnDRAGPUs(t *testing.T, env *operator.Env, s *scheduler.Scheduler) {
	f := scheduler.GB300("pfkaiext", 1, 8, 1)
	for i := range f.Nodes {
		if gpus, gpu := f.Nodes[i].Allocatable["nvidia.com/gpu"]; gpu {
			f.Nodes[i].Allocatable = f.Nodes[i].Allocatable.DeepCopy()
			delete(f.Nodes[i].Allocatable, "nvidia.com/gpu")
			f.Nodes[i].Devices = map[string]int{scheduler.GPUDriver: int(gpus.Value()), scheduler.RoCEClass: 8, scheduler.ChannelDriver: 1}
		}
	}
	class := "gpu-kaiext.nvidia.com"
	f.Classes = append(f.Classes, &resourcev1.DeviceClass{ObjectMeta: objectMeta(class), Spec: resourcev1.DeviceClassSpec{
		ExtendedResourceName: ptr.To("nvidia.com/gpu"),
		Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + scheduler.GPUDriver + `"`}}}}})
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &resourcev1.DeviceClass{ObjectMeta: objectMeta(class)})
	})
	fleet(t, env, f)
	r := qwen(t, "pfkaiext")
	run := scenarioRun{name: "pfkaiext", ns: namespaceFor("pfkaiext"), objs: r.Objs}
	rep := predict(t, env, run)
	assertPlaced(t, rep, "RayJob/pfkaiext worker group gpu-workers-segment-0", 1)
	applyAndCompare(t, env, s, rep, run)
}

// nicsHeld: on 4 GB300 nodes with room for two workers each but for the
// NICs, the first run's claims hold every node's 8 NICs (and its one
// channel), so the second run's workers place nowhere.
func nicsHeld(t *testing.T, env *operator.Env, s *scheduler.Scheduler) {
	f := scheduler.GB300("pfheld", 1, 8, 1)
	var nodes []scheduler.Node
	for _, n := range f.Nodes {
		if n.Devices == nil || strings.HasSuffix(n.Name, "-n00") || strings.HasSuffix(n.Name, "-n01") ||
			strings.HasSuffix(n.Name, "-n02") || strings.HasSuffix(n.Name, "-n03") {
			if n.Devices != nil {
				// Room for two workers but for the NICs.
				n.Allocatable = n.Allocatable.DeepCopy()
				n.Allocatable["nvidia.com/gpu"] = resource.MustParse("8")
				n.Allocatable[corev1.ResourceCPU] = resource.MustParse("300")
				n.Allocatable[corev1.ResourceMemory] = resource.MustParse("2000Gi")
			}
			nodes = append(nodes, n)
		}
	}
	f.Nodes = nodes
	fleet(t, env, f)
	a := qwenOffKAI(t, "pfheld-a")
	applyAndCompare(t, env, s, predict(t, env, a), a)
	b := qwenOffKAI(t, "pfheld-b")
	rep := predict(t, env, b)
	assertPlaced(t, rep, "RayJob/pfheld-b worker group gpu-workers-segment-0", 0)
	applyAndCompare(t, env, s, rep, b)
}

// scenarioRun is a run applied into a namespace of its own.
type scenarioRun struct {
	name, ns string
	objs     []*unstructured.Unstructured
}

func h100(t *testing.T, name string) scenarioRun {
	t.Helper()
	r := renderRun(t, fixtures.ShippedProfile(t, "h100-nfs-2n8g"), name)
	return scenarioRun{name: name, ns: namespaceFor(name), objs: r.Objs}
}

// ultra is the GB300 ultra profile at workers workers, off KAI.
func ultra(t *testing.T, name string, workers int64) scenarioRun {
	t.Helper()
	r := renderRun(t, fixtures.ShippedProfile(t, "gb300-ultra-48n-pipeclean"), name)
	for _, u := range r.Objs {
		if u.GetKind() != "RayJob" {
			continue
		}
		// One GPU segment of workers pods; the other segments dropped.
		groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "rayClusterSpec", "workerGroupSpecs")
		var kept []any
		for _, g := range groups {
			gm := g.(map[string]any)
			name := gm["groupName"].(string)
			switch {
			case name == "gpu-workers-segment-0":
				gm["replicas"], gm["minReplicas"], gm["maxReplicas"] = workers, workers, workers
			case strings.HasPrefix(name, "gpu-workers"):
				continue
			}
			kept = append(kept, gm)
		}
		require.NoError(t, unstructured.SetNestedSlice(u.Object, kept, "spec", "rayClusterSpec", "workerGroupSpecs"))
	}
	return scenarioRun{name: name, ns: namespaceFor(name), objs: offKAI(t, r.Objs)}
}

func qwenOffKAI(t *testing.T, name string) scenarioRun {
	t.Helper()
	r := qwen(t, name)
	return scenarioRun{name: name, ns: namespaceFor(name), objs: offKAI(t, r.Objs)}
}

// offKAI sends every pod of the run to the default scheduler.
func offKAI(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() != "RayJob" {
			continue
		}
		unstructured.RemoveNestedField(u.Object, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "schedulerName")
		groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "rayClusterSpec", "workerGroupSpecs")
		for _, g := range groups {
			unstructured.RemoveNestedField(g.(map[string]any), "template", "spec", "schedulerName")
		}
		require.NoError(t, unstructured.SetNestedSlice(u.Object, groups, "spec", "rayClusterSpec", "workerGroupSpecs"))
	}
	return objs
}

// fleet creates f for the test and removes it at its end.
func fleet(t *testing.T, env *operator.Env, f scheduler.Fleet) {
	t.Helper()
	cleanup, err := scheduler.Create(context.Background(), env, f)
	require.NoError(t, err)
	t.Cleanup(cleanup)
}

// predict is preflight --nodes on the runs together, each in its namespace.
func predict(t *testing.T, env *operator.Env, runs ...scenarioRun) preflight.Report {
	t.Helper()
	return predictWith(t, env.Server.Config, runs...)
}

// predictWith is predict reading the cluster through cfg.
func predictWith(t *testing.T, cfg *rest.Config, runs ...scenarioRun) preflight.Report {
	t.Helper()
	var docs []rendered.Doc
	for _, r := range runs {
		for _, u := range r.objs {
			c := u.DeepCopy()
			c.SetNamespace(r.ns)
			docs = append(docs, rendered.FromData(c.Object))
		}
	}
	c, err := kube.FromConfig(cfg, runs[0].ns, kube.Options{})
	require.NoError(t, err)
	in, err := preflight.InputOf(docs, "", runs[0].ns)
	require.NoError(t, err)
	in.Nodes = true
	rep, err := preflight.Run(context.Background(), c, in)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, preflight.Write(&b, rep, "text"))
	t.Logf("preflight:\n%s", b.String())
	return rep
}

var placedRE = regexp.MustCompile(`^(?:all (\d+) placed|(\d+) of \d+ placed)`)

// predicted is, per pod group ("RayJob/x head"), how many pods preflight
// says are placed.
func predicted(t *testing.T, rep preflight.Report) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, l := range rep.Lines {
		if l.Kind != "Nodes" || l.Name == "(all)" {
			continue
		}
		m := placedRE.FindStringSubmatch(l.Detail)
		require.NotNil(t, m, "line %s: %s", l.Name, l.Detail)
		n, _ := strconv.Atoi(m[1] + m[2])
		out[l.Name] = n
	}
	return out
}

func assertPlaced(t *testing.T, rep preflight.Report, group string, want int) {
	t.Helper()
	assert.Equal(t, want, predicted(t, rep)[group], "preflight's placed pods of %s", group)
}

// assertFinding: preflight has a line about run naming what it holds.
func assertFinding(t *testing.T, rep preflight.Report, run, holds string) {
	t.Helper()
	for _, l := range rep.Lines {
		if l.Kind == "Run" && l.Name == run && strings.Contains(l.Detail, holds) {
			return
		}
	}
	t.Errorf("no finding on %s naming %q", run, holds)
}

// applyAndCompare applies run and waits for the scheduler to bind as many
// of its pods as preflight said; then every pod group of the run has
// exactly preflight's count bound.
func applyAndCompare(t *testing.T, env *operator.Env, s *scheduler.Scheduler, rep preflight.Report, run scenarioRun) []corev1.Pod {
	t.Helper()
	want, total, placed := map[string]int{}, 0, 0
	for group, n := range predicted(t, rep) {
		// The submitter comes once the head is ready, which no kubelet
		// here makes it.
		if strings.HasPrefix(group, "RayJob/"+run.name+" ") && !strings.HasSuffix(group, " submitter") {
			want[group] = n
			placed += n
		}
	}
	total, _ = expectedPods(t, run.objs)
	apply(t, env, run.ns, run.objs)
	t.Cleanup(func() { scheduler.Teardown(env, run.ns) })
	_, err := scheduler.Pods(context.Background(), env, run.ns, total, bindTimeout)
	require.NoError(t, err)
	pods := waitScheduled(t, env, s, run.ns, total, total-placed)
	assert.Equal(t, want, bound(run.name, pods), "run %s: preflight's placement and the scheduler's", run.name)
	return pods
}

// bound counts the bound pods of RayJob name per pod group, named as
// preflight names them.
func bound(name string, pods []corev1.Pod) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		group := "head"
		if p.Labels["ray.io/node-type"] != "head" {
			group = "worker group " + p.Labels["ray.io/group"]
		}
		key := fmt.Sprintf("RayJob/%s %s", name, group)
		if _, ok := out[key]; !ok {
			out[key] = 0
		}
		if p.Spec.NodeName != "" {
			out[key]++
		}
	}
	return out
}
