package kueue_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Argo CD syncs a Kueue run with ServerSideApply=true (field manager
// argocd-controller, conflicts forced); Kueue admits it, KubeRay creates
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
func TestArgoCDResyncNeverRestarts(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-argocd"
	queue(t, env, ns, "lab-argocd", "16")
	_, objs, name := render(t, "kq-argocd", ns)

	require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
	require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to admit and KubeRay to create 3 Pods", func(ctx context.Context) (bool, string, error) {
		pods, err := env.PodUIDs(ctx, ns)
		j := rayJob(t, env, ns, name)
		return err == nil && len(pods) == 3 && !j.Spec.Suspend, fmt.Sprintf("suspend=%v, %d Pods", j.Spec.Suspend, len(pods)), err
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
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
	assert.Equal(t, withoutKueueWorkerMarks(before.Spec), after.Spec, "the forced re-apply changed more than Kueue's worker-template labels")
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

// withoutKueueWorkerMarks is spec with Kueue's kueue.x-k8s.io/ labels and
// annotations removed from its worker groups' templates.
func withoutKueueWorkerMarks(spec rayv1.RayJobSpec) rayv1.RayJobSpec {
	out := *spec.DeepCopy()
	for i := range out.RayClusterSpec.WorkerGroupSpecs {
		meta := &out.RayClusterSpec.WorkerGroupSpecs[i].Template.ObjectMeta
		for _, m := range []*map[string]string{&meta.Labels, &meta.Annotations} {
			maps.DeleteFunc(*m, func(k, _ string) bool { return strings.HasPrefix(k, "kueue.x-k8s.io/") })
			if len(*m) == 0 {
				*m = nil
			}
		}
	}
	return out
}
