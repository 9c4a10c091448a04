// Package afterapply drives `nrl-k8s preflight` and `nrl-k8s status`
// against the operator tier: the real kube-apiserver with ServiceAccount
// and Pod Security admission on, and KubeRay v1.5.0's own reconcilers
// turning what we render into RayClusters and Pods (internal/operator). No
// fake client: what the commands read is what the server holds.
package afterapply

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the operator tier", operator.StopShared))
}

const (
	gb300Profile = "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"
	gb300Recipe  = "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"
	// The GB300 profile's references (profiles/gb300/...): its pods run as
	// this ServiceAccount, mount this PVC, pull with this Secret, and claim
	// RoCE NICs of this DeviceClass in this KAI queue.
	gb300SA          = "nemo-rl-endpoint-registry"
	gb300PVC         = "rl-workspace"
	gb300PullSecret  = "nvcr-secret"
	gb300DeviceClass = "roce.networking.k8s.aws"
	gb300Queue       = "rl"
	gpuDeviceClass   = "gpu.nvidia.com"
)

// render renders the GB300 example as run `name` into namespace ns and
// returns the stream (file) and its objects.
func render(t *testing.T, ns, name string) (string, []*unstructured.Unstructured) {
	t.Helper()
	root := testenv.RepoRoot(t)
	code, out, errs := clirun.Run("render", filepath.Join(root, gb300Recipe), "--infra", filepath.Join(root, gb300Profile),
		"--user", "alice", "-n", ns, "--name", name)
	require.Equal(t, 0, code, errs)
	file := filepath.Join(t.TempDir(), name+".yaml")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o600))
	objs, err := fixtures.Decode([]byte(out))
	require.NoError(t, err)
	return file, objs
}

func kubeconfig(t *testing.T, env *operator.Env) string {
	t.Helper()
	kc, err := env.Server.WriteKubeconfig(t.TempDir())
	require.NoError(t, err)
	return kc
}

// prerequisites creates what the GB300 profile references, as a cluster
// admin and the user would before applying: the ServiceAccount, a Bound
// PVC, the pull Secret, the RoCE DeviceClass, KAI's Queue CRD and queue.
func prerequisites(t *testing.T, env *operator.Env, ns string, skip ...string) {
	t.Helper()
	ctx := context.Background()
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	c := env.Client
	create := func(o client.Object) {
		err := c.Create(ctx, o)
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			require.NoError(t, err)
		}
	}
	if !skipped["ServiceAccount"] {
		require.NoError(t, env.CreateServiceAccount(ctx, ns, gb300SA))
	}
	if !skipped["PersistentVolumeClaim"] {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gb300PVC},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}},
				VolumeName:  "lustre-" + ns,
			},
		}
		create(pvc)
		// No PV controller runs here: the test binds it as the controller would.
		pvc.Status.Phase = corev1.ClaimBound
		require.NoError(t, c.Status().Update(ctx, pvc))
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gb300PullSecret}, Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{"token": "never-printed"}})
	if !skipped["DeviceClass"] {
		create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: gb300DeviceClass}})
		create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: prereq.ComputeDomainChannelClass}})
		// The GPU source of a cluster where only NVIDIA's GPU DRA driver
		// publishes GPUs: its DeviceClass serves nvidia.com/gpu requests.
		create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: gpuDeviceClass},
			Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptrTo("nvidia.com/gpu")}})
	}
	installKAIQueue(t, env)
}

// installKAIQueue installs a minimal stand-in for KAI's Queue CRD
// (scheduling.run.ai/v2, cluster-scoped, as KAI ships it) and the queue.
func installKAIQueue(t *testing.T, env *operator.Env) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "queues.scheduling.run.ai"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "scheduling.run.ai", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "queues", Singular: "queue", Kind: "Queue", ListKind: "QueueList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	// The Env's scheme has no apiextensions types: the CRD goes as
	// unstructured data.
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: data}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	if err := env.Client.Create(ctx, u); err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	q := &unstructured.Unstructured{}
	q.SetAPIVersion("scheduling.run.ai/v2")
	q.SetKind("Queue")
	q.SetName(gb300Queue)
	// Created once the CRD is established (served).
	require.NoError(t, operator.Wait(ctx, 30*time.Second, "queue created", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Create(ctx, q.DeepCopy())
		if err == nil || strings.Contains(err.Error(), "already exists") {
			return true, "", nil
		}
		return false, err.Error(), nil
	}))
}

func ptrTo[T any](v T) *T { return &v }

// lineFor finds the preflight line about kind and name.
func lineFor(t *testing.T, out, state, kind, name string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, state+" ") && strings.Contains(l, " "+kind+" ") && strings.Contains(l, name) {
			return
		}
	}
	t.Errorf("no %q line for %s %s in:\n%s", state, kind, name, out)
}

func TestPreflight(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	ctx := context.Background()
	ns := "preflight"
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	file, _ := render(t, ns, "pf")

	t.Run("missing ServiceAccount, PVC and DeviceClass are named", func(t *testing.T) {
		prerequisites(t, env, ns, "ServiceAccount", "PersistentVolumeClaim", "DeviceClass")
		// Another test may have created the DeviceClass (cluster-scoped):
		// this one needs it absent.
		for _, dc := range []string{gb300DeviceClass, prereq.ComputeDomainChannelClass, gpuDeviceClass} {
			_ = env.Client.Delete(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: dc}})
		}
		code, out, errs := clirun.Run("preflight", "-f", file, "--kubeconfig", kc)
		require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errs)
		lineFor(t, out, "missing", "ServiceAccount", ns+"/"+gb300SA)
		lineFor(t, out, "missing", "PersistentVolumeClaim", ns+"/"+gb300PVC)
		lineFor(t, out, "missing", "DeviceClass", gb300DeviceClass)
		// The ComputeDomain channel's class, and no source for nvidia.com/gpu.
		lineFor(t, out, "missing", "DeviceClass", prereq.ComputeDomainChannelClass)
		lineFor(t, out, "missing", "ExtendedResource", "nvidia.com/gpu")
		require.Contains(t, out, "no node advertises nvidia.com/gpu and no DeviceClass declares extendedResourceName: nvidia.com/gpu")
		lineFor(t, out, "ok", "Secret", ns+"/"+gb300PullSecret)
		lineFor(t, out, "ok", "PodSecurity", ns)
		require.NotContains(t, out, "never-printed")
	})

	t.Run("a Pending PVC is not enough", func(t *testing.T) {
		// A namespace of its own: nothing removes a deleted PVC's
		// protection finalizer here (no controller manager).
		ns := "preflight-pending"
		require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
		prerequisites(t, env, ns, "PersistentVolumeClaim")
		file, _ := render(t, ns, "pfp")
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gb300PVC},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		require.NoError(t, env.Client.Create(ctx, pvc))
		code, out, _ := clirun.Run("preflight", "-f", file, "--kubeconfig", kc)
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "exists but is Pending, not Bound")
	})

	t.Run("all present: exit 0, also from the recipe and as JSON", func(t *testing.T) { preflightAllPresent(t, env, ns, kc, file) })

	t.Run("--nodes places every run of the input together", func(t *testing.T) { preflightNodes(t, env, ns, kc) })

	t.Run("a baseline namespace refuses the GB300 workers", func(t *testing.T) {
		require.NoError(t, env.CreateNamespace(ctx, "preflight-baseline", "baseline"))
		prerequisites(t, env, "preflight-baseline")
		f, _ := render(t, "preflight-baseline", "pfb")
		code, out, _ := clirun.Run("preflight", "-f", f, "--kubeconfig", kc)
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "missing      PodSecurity preflight-baseline")
		require.Contains(t, out, "enforces baseline; the run needs privileged")
		require.Contains(t, out, "IPC_LOCK")
	})
}

// preflightAllPresent: with every prerequisite in place preflight exits 0,
// from the rendered file and from the recipe and profile, as JSON too.
func preflightAllPresent(t *testing.T, env *operator.Env, ns, kc, file string) {
	prerequisites(t, env, ns)
	code, out, errs := clirun.Run("preflight", "-f", file, "--kubeconfig", kc)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "0 missing")
	lineFor(t, out, "ok", "CustomResourceDefinition", "rayjobs.ray.io")
	lineFor(t, out, "ok", "CustomResourceDefinition", "computedomains.resource.nvidia.com")
	lineFor(t, out, "ok", "Queue", gb300Queue)
	lineFor(t, out, "ok", "ExtendedResource", "nvidia.com/gpu")
	require.Contains(t, out, "DeviceClass "+gpuDeviceClass+" declares it as its extendedResourceName")

	root := testenv.RepoRoot(t)
	code, out, errs = clirun.Run("preflight", filepath.Join(root, gb300Recipe), "--infra", filepath.Join(root, gb300Profile),
		"--user", "alice", "-n", ns, "--kubeconfig", kc, "-o", "json")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	var rep struct {
		Namespace     string
		Prerequisites []struct{ Kind, Name, State string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, ns, rep.Namespace)
	require.NotEmpty(t, rep.Prerequisites)
	for _, p := range rep.Prerequisites {
		require.Equal(t, "ok", p.State, "%s %s", p.Kind, p.Name)
	}
}

// preflightNodes: --nodes places one run's pods, then two runs' together,
// on the GB300 fleet, cordoned nodes included.
func preflightNodes(t *testing.T, env *operator.Env, ns, kc string) {
	prerequisites(t, env, ns)
	gb300Fleet(t, env, 4)
	a, _ := render(t, ns, "pf-a")
	b, _ := render(t, ns, "pf-b")
	both := filepath.Join(t.TempDir(), "both.yaml")
	require.NoError(t, os.WriteFile(both, []byte(testenv.ReadFile(t, a)+"---\n"+testenv.ReadFile(t, b)), 0o600))
	code, out, errs := clirun.Run("preflight", "-f", a, "--nodes", "--kubeconfig", kc)
	require.Equal(t, 1, code, "one run's NIC claims fit no node:\n%s\n%s", out, errs)
	// The RoCE claim asks 8 NICs (dra.roce.count's default), the GB300
	// nodes publish 4 each: never allocated, on any node, so KAI's gang
	// (the qwen3 profile's pods name KAI) places none of the run.
	lineFor(t, out, "missing", "Devices", "roce-pf-a-training")
	require.Contains(t, out, "no node publishes 8: the most on one node is 4")
	lineFor(t, out, "missing", "Nodes", "RayJob/pf-a worker group gpu-workers-segment-3")
	// Its DeviceClasses have no selector: the RoCE and channel claims
	// take any device of the node, 9 of its 4.
	require.Contains(t, out, "not enough free devices (4)")
	lineFor(t, out, "missing", "Run", "RayJob/pf-a")
	require.Contains(t, out, "KAI places none, and the run waits, holding no GPU")

	// With 10 NICs a node (8 for the RoCE claim, one for the channel
	// claim, whose class selects any device here) each run alone fits; the two together need 8
	// of 4 GPU nodes, and KAI places the second run's gang not at all.
	moreNICs(t, env, 4, 6)
	code, out, errs = clirun.Run("preflight", "-f", a, "--nodes", "--kubeconfig", kc)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	lineFor(t, out, "ok", "Nodes", "RayJob/pf-a worker group gpu-workers-segment-3")
	lineFor(t, out, "ok", "Nodes", "RayJob/pf-a head")
	code, out, errs = clirun.Run("preflight", "-f", both, "--nodes", "--kubeconfig", kc)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	lineFor(t, out, "ok", "Nodes", "RayJob/pf-a worker group gpu-workers-segment-0")
	lineFor(t, out, "missing", "Nodes", "RayJob/pf-b worker group gpu-workers-segment-0")
	require.Contains(t, out, "0 of 1 placed: KAI places the run's gang all or nothing, and 0 fit in one nvidia.com/gpu.clique: ")
	require.Contains(t, out, "not enough free cpu, memory, nvidia.com/gpu (4)")
	// The heads ask for 48 CPUs each of a 64-CPU pool, counted too.
	lineFor(t, out, "missing", "Nodes", "RayJob/pf-b head")
	require.Contains(t, out, "not enough free cpu, memory (1)")
	lineFor(t, out, "missing", "Run", "RayJob/pf-b")

	// Two runs in two namespaces, each file its own: both asked, each
	// namespace named (the second does not exist), the second run placed
	// after the first.
	c, _ := render(t, ns+"-other", "pf-c")
	code, out, errs = clirun.Run("preflight", "-f", a, "-f", c, "--nodes", "--kubeconfig", kc)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	lineFor(t, out, "missing", "Namespace", ns+"-other")
	lineFor(t, out, "missing", "Nodes", ns+"-other/RayJob/pf-c head")
	require.Contains(t, out, "(namespace "+ns+", "+ns+"-other)")

	// Cordoned GPU nodes still take the GB300 workers: {operator:
	// Exists} without a key tolerates node.kubernetes.io/unschedulable.
	cordon(t, env, "gb300-gpu-0", "gb300-gpu-1")
	_, out, _ = clirun.Run("preflight", "-f", a, "--nodes", "--kubeconfig", kc)
	lineFor(t, out, "ok", "Nodes", "RayJob/pf-a worker group gpu-workers-segment-3")
}

// gb300Fleet creates gpus GB300 nodes (4 GPUs each, one NVL72 clique, the
// GPU taint) and the CPU pool node the GB300 heads select, and removes
// them when the test ends: the shape preflight --nodes places pods on.
// moreNICs has each of the gpus GB300 nodes publish n more RoCE NICs, in
// a second pool.
func moreNICs(t *testing.T, env *operator.Env, gpus, n int) {
	t.Helper()
	for i := range gpus {
		nodeName := fmt.Sprintf("gb300-gpu-%d", i)
		var devices []resourcev1.Device
		for j := range n {
			devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("nic-%d", 4+j)})
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: nodeName + "-roce-more"},
			Spec: resourcev1.ResourceSliceSpec{Driver: gb300DeviceClass, NodeName: &nodeName,
				Pool:    resourcev1.ResourcePool{Name: nodeName + "-more", Generation: 1, ResourceSliceCount: 1},
				Devices: devices}}
		require.NoError(t, env.Client.Create(context.Background(), slice))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), slice) })
	}
}

func gb300Fleet(t *testing.T, env *operator.Env, gpus int) {
	t.Helper()
	ctx := context.Background()
	node := func(name string, labels map[string]string, taints []corev1.Taint, alloc corev1.ResourceList) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		require.NoError(t, env.Client.Create(ctx, n))
		// The API server taints a new node not-ready; the node lifecycle
		// controller lifts it once the kubelet reports Ready. Neither runs
		// here: the fleet is created Ready, with only its own taints.
		n.Status.Capacity, n.Status.Allocatable = alloc, alloc
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		require.NoError(t, env.Client.Status().Update(ctx, n))
		n.Spec.Taints = taints
		require.NoError(t, env.Client.Update(ctx, n))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	}
	for i := range gpus {
		node(fmt.Sprintf("gb300-gpu-%d", i), map[string]string{"nvidia.com/gpu.clique": "rack-a.1", "nvidia.com/gpu.product": "NVIDIA-GB300"},
			[]corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}},
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("144"), corev1.ResourceMemory: resource.MustParse("1000Gi"),
				corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("4")})
	}
	// Each GPU node's NIC driver publishes its 4 RoCE NICs (one
	// ResourceSlice per node, as a DRA driver's kubelet plugin does).
	for i := range gpus {
		nodeName := fmt.Sprintf("gb300-gpu-%d", i)
		var devices []resourcev1.Device
		for j := range 4 {
			devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("nic-%d", j)})
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: nodeName + "-roce"},
			Spec: resourcev1.ResourceSliceSpec{Driver: gb300DeviceClass, NodeName: &nodeName,
				Pool:    resourcev1.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: 1},
				Devices: devices}}
		require.NoError(t, env.Client.Create(ctx, slice))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), slice) })
	}
	node("cpu-pool-0", map[string]string{"nodeGroup": "customer-cpu"}, nil,
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods: resource.MustParse("110")})
}

func cordon(t *testing.T, env *operator.Env, names ...string) {
	t.Helper()
	for _, name := range names {
		var n corev1.Node
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n))
		n.Spec.Unschedulable = true
		require.NoError(t, env.Client.Update(context.Background(), &n))
	}
}
