// Package scheduling_test is the scheduling tier: every shipped profile and
// golden run is applied to the real kube-apiserver, KubeRay v1.5.0's
// reconcilers create its Pods (internal/operator), and the real
// kube-scheduler v1.36.3 (internal/scheduler) places them on a fleet shaped
// like the profile's target, allocating their DRA claims from the devices
// the fleet publishes. It asserts where the Pods go, and that a run the
// fleet cannot hold stays Pending with the scheduler's own reason; one test
// per scheduling finding shows what the scheduler does with our output.
package scheduling_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the scheduling tier", scheduler.StopShared))
}

// bindTimeout bounds each wait for the scheduler: generous for 2 shared
// cores, short enough that a stuck run fails with what it waited for.
const bindTimeout = 60 * time.Second

type run struct {
	name string
	objs []*unstructured.Unstructured
}

type indexEntry struct{ Name, Profile, Recipe string }

// renderRun renders a shipped profile's recipe and profile as run name.
func renderRun(t *testing.T, profile, recipeFile, name string, overrides ...string) run {
	t.Helper()
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe: recipeFile, Profile: profile, Overrides: overrides,
		Run: runparams.Run{Mode: runparams.RayJob, User: "alice", Name: name},
	})
	require.False(t, res.Diags.HasErrors(), "%s: %v", name, res.Diags)
	b, err := emit.Stream(res.Docs)
	require.NoError(t, err)
	objs, err := apiserver.Decode(b)
	require.NoError(t, err)
	return run{name, objs}
}

func shipped(t *testing.T) map[string]indexEntry {
	t.Helper()
	root := testenv.RepoRoot(t)
	var index struct{ Profiles []indexEntry }
	require.NoError(t, yaml.Unmarshal([]byte(testenv.ReadFile(t, filepath.Join(root, "profiles/index.yaml"))), &index))
	out := map[string]indexEntry{}
	for _, p := range index.Profiles {
		p.Profile = filepath.Join(root, "profiles", p.Profile)
		p.Recipe = filepath.Join(root, "profiles", p.Recipe)
		out[p.Name] = p
	}
	return out
}

// goldenRuns are the golden rayjob-mode outputs, but for the cases that
// render a shipped profile (their run.yaml names ../profiles/): those are
// the shipped renders under another name, and binding them twice doubles
// the fleet's pods for no new placement.
func goldenRuns(t *testing.T) []run {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "tests/golden/*/expected/rayjob.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []run
	for _, f := range files {
		runFile := filepath.Join(filepath.Dir(filepath.Dir(f)), "run.yaml")
		if strings.Contains(testenv.ReadFile(t, runFile), "/profiles/") {
			continue
		}
		objs, err := apiserver.Decode([]byte(testenv.ReadFile(t, f)))
		require.NoError(t, err, f)
		out = append(out, run{"golden-" + filepath.Base(filepath.Dir(filepath.Dir(f))), objs})
	}
	return out
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

func namespaceFor(name string) string {
	ns := strings.Trim(notDNS.ReplaceAllString(strings.ToLower("s-"+name), "-"), "-")
	if len(ns) > 63 {
		ns = strings.TrimRight(ns[:63], "-")
	}
	return ns
}

// apply creates ns (privileged: the GB300 workers need it), what the run's
// Pods need to be admitted and scheduled (their ServiceAccounts, and their
// PersistentVolumeClaims bound to PersistentVolumes, standing in for the
// PV controller), then the run, in ns.
func apply(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	sas, pvcs := references(objs)
	for _, sa := range append(sas, "default") {
		require.NoError(t, env.CreateServiceAccount(ctx, ns, sa))
	}
	for _, name := range pvcs {
		// As the PV controller binds them (pkg/controller/volume/persistentvolume):
		// the claim annotated bind-completed, the volume's claimRef its UID.
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}},
				VolumeName:  ns + "-" + name, StorageClassName: new(string),
			}}
		require.NoError(t, env.Client.Create(ctx, pvc))
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Ti")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: pvc.UID},
				PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/" + name}},
			}}
		require.NoError(t, env.Client.Create(ctx, pv))
		pv.Status.Phase = corev1.VolumeBound
		require.NoError(t, env.Client.Status().Update(ctx, pv))
		pvc.Status.Phase = corev1.ClaimBound
		pvc.Status.Capacity = pv.Spec.Capacity
		pvc.Status.AccessModes = pvc.Spec.AccessModes
		require.NoError(t, env.Client.Status().Update(ctx, pvc))
	}
	require.NoError(t, env.Apply(ctx, ns, objs))
}

// references are the ServiceAccounts and PersistentVolumeClaims the run's
// pod templates name.
func references(objs []*unstructured.Unstructured) (sas, pvcs []string) {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["serviceAccountName"].(string); ok && !seen["sa/"+s] {
				seen["sa/"+s] = true
				sas = append(sas, s)
			}
			if s, ok := v["claimName"].(string); ok && !seen["pvc/"+s] {
				seen["pvc/"+s] = true
				pvcs = append(pvcs, s)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, u := range objs {
		walk(u.Object["spec"])
	}
	sort.Strings(sas)
	sort.Strings(pvcs)
	return sas, pvcs
}

// pods are the Pods of ns once KubeRay has created want of them.
func pods(t *testing.T, env *operator.Env, ns string, want int) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	require.NoError(t, operator.Wait(context.Background(), bindTimeout, fmt.Sprintf("KubeRay to create %d Pods in %s", want, ns),
		func(ctx context.Context) (bool, string, error) {
			var l corev1.PodList
			if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			out = l.Items
			return len(out) >= want, fmt.Sprintf("%d Pods", len(out)), nil
		}))
	return out
}

// waitScheduled waits until every Pod of ns is bound, or (pending > 0)
// until exactly that many stay unschedulable with the scheduler's reason.
func waitScheduled(t *testing.T, env *operator.Env, s *scheduler.Scheduler, ns string, total, pending int) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	err := operator.Wait(context.Background(), bindTimeout, fmt.Sprintf("the scheduler to bind %d of %d Pods in %s", total-pending, total, ns),
		func(ctx context.Context) (bool, string, error) {
			var l corev1.PodList
			if err := env.Client.List(context.WithoutCancel(ctx), &l, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			out = l.Items
			bound, unschedulable, reason := 0, 0, ""
			for _, p := range out {
				switch {
				case p.Spec.NodeName != "":
					bound++
				case unschedulableReason(p) != "":
					unschedulable++
					reason = p.Name + ": " + unschedulableReason(p)
				}
			}
			return len(out) == total && bound == total-pending && unschedulable == pending,
				fmt.Sprintf("%d Pods, %d bound, %d unschedulable (%s)", len(out), bound, unschedulable, reason), nil
		})
	if err != nil {
		t.Logf("kube-scheduler log (tail):\n%s", tail(s.Log(), 4000))
	}
	require.NoError(t, err)
	return out
}

// unschedulableReason is the scheduler's PodScheduled=False message.
func unschedulableReason(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// teardown removes the run's objects and Pods (nothing garbage-collects
// here): a Pending Pod of one test must not take the next test's nodes.
func teardown(env *operator.Env, ns string) {
	ctx := context.Background()
	_ = env.Client.DeleteAllOf(ctx, &rayv1.RayJob{}, client.InNamespace(ns))
	_ = env.Client.DeleteAllOf(ctx, &rayv1.RayCluster{}, client.InNamespace(ns))
	_ = env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	_ = env.Client.DeleteAllOf(ctx, &resourcev1.ResourceClaim{}, client.InNamespace(ns))
}

// expectedPods is how many Pods KubeRay creates for the run's RayJobs: the
// head and every worker group's replicas × numOfHosts.
func expectedPods(t *testing.T, objs []*unstructured.Unstructured) (int, map[string]int) {
	t.Helper()
	total, gpuByProduct := 0, map[string]int{}
	for _, u := range objs {
		if u.GetKind() != "RayJob" {
			continue
		}
		var j rayv1.RayJob
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &j))
		if j.Spec.RayClusterSpec == nil {
			continue
		}
		total++
		for _, g := range j.Spec.RayClusterSpec.WorkerGroupSpecs {
			n := int(*g.Replicas) * int(max(g.NumOfHosts, 1))
			total += n
			gpuByProduct[g.Template.Spec.NodeSelector["nvidia.com/gpu.product"]] += n
		}
	}
	return total, gpuByProduct
}

func racksFor(pods int) int { return int(math.Ceil(float64(pods) / 18)) }
