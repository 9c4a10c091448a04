package kueue_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Argo CD syncs a Kueue run with ServerSideApply=true (field manager
// argocd-controller, conflicts forced), in rayjob and raycluster mode.
func TestArgoCDResyncNeverRestarts(t *testing.T) {
	t.Run("rayjob", resyncRayJob)
	t.Run("raycluster", resyncRayCluster)
}

// rayjob mode: Kueue admits the RayJob, KubeRay creates
// and runs its cluster. The managers besides Argo CD that then own fields
// of the RayJob are argosync.ControllerManagers (the shipped Application
// ignores exactly those). A forced re-apply of the same Git state never
// restarts or re-suspends the run: the Workload stays admitted, the
// RayCluster and its Pods are the same objects, the job is not submitted
// again. It is not a no-op, though: KubeRay's CRD makes
// spec.rayClusterSpec.workerGroupSpecs an atomic list, so Kueue's
// admission (its pod-set labels and Workload annotation in each worker
// template) makes Kueue the owner of the whole list, and the forced apply
// takes it back and drops them (a generation bump KubeRay ignores for a
// running job). That is why the shipped Application ignores Kueue's fields
// and syncs only out-of-sync objects (docs/gitops.md).
func resyncRayJob(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-argocd"
	queue(t, env, ns, "lab-argocd", "16")
	_, objs, name := render(t, "kq-argocd", ns, runparams.RayJob)

	require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
	admitted(t, env, k, ns, name)
	job := rayJob(t, env, ns, name)
	c, err := env.WaitForCluster(ctx, ns, job.Status.RayClusterName, waitFor)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	_, err = env.WaitForJobDeploymentStatus(ctx, ns, name, rayv1.JobDeploymentStatusRunning, waitFor)
	require.NoError(t, err)

	before := rayJob(t, env, ns, name)
	owners, err := argosync.Owners(before.ManagedFields)
	require.NoError(t, err)
	for m, paths := range owners {
		t.Logf("RayJob fields of %s: %v", m, paths)
	}
	others := argosync.Controllers(before.ManagedFields)
	assert.Equal(t, argosync.ControllerManagers, others, "the managers writing into an admitted, running RayJob besides Argo CD")
	var rc rayv1.RayCluster
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: before.Status.RayClusterName}, &rc))
	rcOwners, err := argosync.Owners(rc.ManagedFields)
	require.NoError(t, err)
	for m, paths := range rcOwners {
		t.Logf("RayCluster (KubeRay's) fields of %s: %d, e.g. %v", m, len(paths), paths[:min(len(paths), 8)])
	}
	pods, err := env.PodUIDs(ctx, ns)
	require.NoError(t, err)

	assert.Contains(t, owners["kueue"], "spec.rayClusterSpec.workerGroupSpecs", "Kueue's admission owns the atomic worker group list")
	wl := workload(t, env, before)

	// The re-sync: the identical render, as Argo CD applies it.
	require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
	time.Sleep(3 * time.Second) // give Kueue and KubeRay time to act on it

	after := rayJob(t, env, ns, name)
	assert.False(t, after.Spec.Suspend, "the re-sync suspended the admitted RayJob again")
	assert.Equal(t, rayv1.JobDeploymentStatusRunning, after.Status.JobDeploymentStatus)
	assert.Equal(t, before.Labels, after.Labels)
	assert.Equal(t, before.Annotations, after.Annotations)
	assert.Equal(t, before.Generation+1, after.Generation, "the forced re-apply changes the worker templates only")
	want := before.Spec.DeepCopy()
	withoutKueueWorkerMarks(want.RayClusterSpec)
	assert.Equal(t, *want, after.Spec, "the forced re-apply changed more than Kueue's worker-template labels")
	wlAfter := workload(t, env, after)
	assert.Equal(t, wl.GetUID(), wlAfter.GetUID(), "the Workload was recreated")
	_, admitted, _ := unstructured.NestedMap(wlAfter.Object, "status", "admission")
	assert.True(t, admitted, "the Workload lost its admission")
	var again rayv1.RayCluster
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rc.Name}, &again), "the RayCluster is gone after the re-sync")
	assert.Equal(t, rc.UID, again.UID, "the RayCluster was recreated")
	assert.Equal(t, rc.Generation, again.Generation, "the RayCluster's spec changed")
	podsAfter, err := env.PodUIDs(ctx, ns)
	require.NoError(t, err)
	assert.Equal(t, pods, podsAfter, "Pods were recreated")
	assert.Len(t, env.Dashboard.Submissions(ns), 1, "the job was submitted again")
}

// withoutKueueWorkerMarks removes Kueue's kueue.x-k8s.io/ labels and
// annotations from spec's worker group templates: a forced apply takes
// the atomic workerGroupSpecs list back without them.
func withoutKueueWorkerMarks(spec *rayv1.RayClusterSpec) {
	for i := range spec.WorkerGroupSpecs {
		meta := &spec.WorkerGroupSpecs[i].Template.ObjectMeta
		for _, m := range []*map[string]string{&meta.Labels, &meta.Annotations} {
			maps.DeleteFunc(*m, func(k, _ string) bool { return strings.HasPrefix(k, "kueue.x-k8s.io/") })
			if len(*m) == 0 {
				*m = nil
			}
		}
	}
}

// raycluster mode: the run's RayCluster carries the queue label (Kueue's
// RayCluster integration admits it), its RayJob submits the training job
// to it through clusterSelector and is not Kueue's. Kueue's webhook
// suspends the RayCluster on creation and Kueue unsuspends it on
// admission; KubeRay then creates its Pods and runs the RayJob on it. The
// managers besides Argo CD that own fields of what Git holds are
// argosync.ControllerManagers, and a forced re-apply of the same render
// never restarts the run: the RayCluster and its Pods are the same
// objects, not suspended again, the Workload stays admitted, the job is
// not submitted again.
func resyncRayCluster(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-argocd-rc"
	queue(t, env, ns, "lab-argocd-rc", "16")
	_, objs, job := render(t, "kq-argocd-rc", ns, runparams.RayCluster)
	var name string
	for _, o := range objs {
		if o.GetKind() == "RayCluster" && o.GetLabels()["kueue.x-k8s.io/queue-name"] != "" {
			name = o.GetName()
		}
	}
	require.NotEmpty(t, name, "the RayCluster Kueue admits")

	require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
	require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to admit and KubeRay to create 3 Pods", func(ctx context.Context) (bool, string, error) {
		pods, err := env.PodUIDs(ctx, ns)
		c := rayCluster(t, env, ns, name)
		return err == nil && len(pods) == 3 && !suspended(c), fmt.Sprintf("suspend=%v, %d Pods", suspended(c), len(pods)), err
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
	c, err := env.WaitForCluster(ctx, ns, name, waitFor)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	_, err = env.WaitForJobDeploymentStatus(ctx, ns, job, rayv1.JobDeploymentStatusRunning, waitFor)
	require.NoError(t, err)

	before := rayCluster(t, env, ns, name)
	wl := workload(t, env, before)
	var seen []string
	lives := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		u := liveObject(t, env, ns, o)
		lives[o.GetKind()+"/"+o.GetName()] = u
		owners, err := argosync.Owners(u.GetManagedFields())
		require.NoError(t, err)
		others := argosync.Controllers(u.GetManagedFields())
		for _, m := range others {
			t.Logf("%s %s: fields of %s: %v", o.GetKind(), o.GetName(), m, append(owners[m], owners[m+"/status"]...))
		}
		if o.GetKind() == "RayJob" {
			assert.Equal(t, []string{"kuberay-operator"}, others, "the RayJob submitting to the admitted RayCluster is not Kueue's")
		}
		seen = append(seen, others...)
	}
	slices.Sort(seen)
	assert.Equal(t, argosync.ControllerManagers, slices.Compact(seen), "the managers writing into an admitted, running raycluster-mode run besides Argo CD")
	owners, err := argosync.Owners(before.ManagedFields)
	require.NoError(t, err)
	assert.Contains(t, owners["kueue"], "spec.workerGroupSpecs", "Kueue's admission owns the RayCluster's atomic worker group list")
	assert.Contains(t, owners["kueue"], "spec.suspend", "Kueue's admission writes suspend: false into the RayCluster (a pointer field), which the render never names")
	pods, err := env.PodUIDs(ctx, ns)
	require.NoError(t, err)

	// The re-sync: the identical render, as Argo CD applies it.
	require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
	time.Sleep(3 * time.Second) // give Kueue and KubeRay time to act on it

	after := rayCluster(t, env, ns, name)
	assert.Equal(t, before.UID, after.UID, "the RayCluster was recreated")
	assert.False(t, suspended(after), "the re-sync suspended the admitted RayCluster again")
	assert.Equal(t, before.Labels, after.Labels)
	assert.Equal(t, before.Annotations, after.Annotations)
	want := before.Spec.DeepCopy()
	withoutKueueWorkerMarks(want)
	assert.Equal(t, *want, after.Spec, "the forced re-apply changed more than Kueue's worker-template labels")
	assert.Equal(t, before.Generation+1, after.Generation, "the forced re-apply changes the worker templates only")
	wlAfter := workload(t, env, after)
	assert.Equal(t, wl.GetUID(), wlAfter.GetUID(), "the Workload was recreated")
	_, admitted, _ := unstructured.NestedMap(wlAfter.Object, "status", "admission")
	assert.True(t, admitted, "the Workload lost its admission")
	podsAfter, err := env.PodUIDs(ctx, ns)
	require.NoError(t, err)
	assert.Equal(t, pods, podsAfter, "Pods were recreated")
	for _, o := range objs {
		if o.GetKind() == "RayCluster" {
			continue
		}
		u := liveObject(t, env, ns, o)
		assert.Equal(t, lives[o.GetKind()+"/"+o.GetName()].Object["spec"], u.Object["spec"], "%s %s: the re-sync changed its spec", o.GetKind(), o.GetName())
	}
	n := 0
	for _, s := range env.Dashboard.Submissions(ns) {
		if s.RayJob == job {
			n++
		}
	}
	assert.Equal(t, 1, n, "the job was submitted again")
}

func rayCluster(t *testing.T, env *operator.Env, ns, name string) *rayv1.RayCluster {
	t.Helper()
	var c rayv1.RayCluster
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &c))
	return &c
}

func suspended(c *rayv1.RayCluster) bool { return c.Spec.Suspend != nil && *c.Spec.Suspend }

// liveObject is applied object o as the server holds it in ns.
func liveObject(t *testing.T, env *operator.Env, ns string, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u, err := env.Live(context.Background(), ns, o)
	require.NoError(t, err)
	return u
}
