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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
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

// renderRun renders shipped profile p in rayjob mode as run name.
func renderRun(t *testing.T, p chartgen.Entry, name string, overrides ...string) fixtures.Run {
	t.Helper()
	run := fixtures.As(runparams.RayJob)
	run.Name = name
	return fixtures.Run{Name: name, Objs: fixtures.Objects(t, fixtures.Request(p, run, overrides...))}
}

// goldenRuns are the golden rayjob-mode outputs, but for the cases that
// render a shipped profile (their run.yaml names ../profiles/): those are
// the shipped renders under another name, and binding them twice doubles
// the fleet's pods for no new placement.
func goldenRuns(t *testing.T) []fixtures.Run {
	t.Helper()
	var out []fixtures.Run
	for _, g := range fixtures.Goldens(t, "rayjob") {
		if !strings.Contains(testenv.ReadFile(t, filepath.Join(g.Dir, "run.yaml")), "/profiles/") {
			out = append(out, fixtures.Run{Name: "golden-" + g.Case, Objs: g.Objs})
		}
	}
	return out
}

// namespaceFor is the run's namespace, apart from the operator tier's.
func namespaceFor(name string) string { return fixtures.NamespaceFor("s-" + name) }

// apply creates ns (privileged: the GB300 workers need it), what the run's
// Pods need to be admitted and scheduled (their ServiceAccounts, and their
// PersistentVolumeClaims bound to PersistentVolumes, standing in for the
// PV controller), then the run, in ns.
func apply(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	sas, pvcs := fixtures.References(objs)
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
		t.Logf("kube-scheduler log (tail):\n%s", fixtures.Tail(s.Log(), 4000))
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
		j := fixtures.Typed[rayv1.RayJob](t, u.Object)
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
