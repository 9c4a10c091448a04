package flux_test

import (
	"context"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
)

// One commit: run A, running, is moved to another LocalQueue (Kueue's
// webhook refuses a running job's queue change), run B is stopped, run C
// is new. With one Kustomization for every run, the refused entry fails
// the whole apply: C is not created and B is not stopped. With one
// Kustomization per run (what ships), the refusal blocks A's alone: A
// keeps running on its queue, B is pruned, C is created. Taking the runs
// over from the shared Kustomization restarts neither.
func TestRefusedEntryBlocksOnlyItsRun(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "fx-iso"
	require.NoError(t, kueue.Queue(ctx, env, ns, "lab-queue", "fx-iso", "32", waitFor))
	require.NoError(t, kueue.Queue(ctx, env, ns, "other-queue", "fx-iso", "32", waitFor))
	a, b := build(t, "fx-a", ns, ""), build(t, "fx-b", ns, "")
	moved := build(t, "fx-a", ns, "", "infra.scheduler.queue=other-queue")
	bStopped, c := build(t, "fx-b", ns, runparams.Stopped), build(t, "fx-c", ns, "")
	assert.Equal(t, "other-queue", rayJobOf(t, moved).GetLabels()["kueue.x-k8s.io/queue-name"])

	team := fluxapply.New(env.Client, fluxapply.Spec{Name: "team-a-runs", Namespace: "flux-system", Prune: true})
	_, err := team.Reconcile(ctx, concat(a, b))
	require.NoError(t, err)
	running(t, env, k, ns, "fx-a")
	running(t, env, k, ns, "fx-b")
	sa, sb := snap(t, env, ns, "fx-a"), snap(t, env, ns, "fx-b")

	_, err = team.Reconcile(ctx, concat(moved, bStopped, c))
	require.Error(t, err, "Kueue's webhook let a running job change its queue")
	t.Logf("one Kustomization for every run: %v", err)
	assert.Contains(t, err.Error(), "fx-a")
	_, err = job(ctx, env, ns, "fx-c")
	assert.True(t, apierrors.IsNotFound(err), "the new run was created despite the failed apply: %v", err)
	jb, err := job(ctx, env, ns, "fx-b")
	require.NoError(t, err, "the stopped run was pruned despite the failed apply")
	assert.False(t, jb.Spec.Suspend)

	// The same runs, one Kustomization each, taking over the objects.
	ka, kb, kc := kustomization(env, "fx-a"), kustomization(env, "fx-b"), kustomization(env, "fx-c")
	_, err = ka.Reconcile(ctx, a)
	require.NoError(t, err)
	_, err = kb.Reconcile(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, sa, snap(t, env, ns, "fx-a"), "taking A over restarted it")
	assert.Equal(t, sb, snap(t, env, ns, "fx-b"), "taking B over restarted it")

	_, err = ka.Reconcile(ctx, moved)
	require.Error(t, err, "Kueue's webhook let a running job change its queue")
	t.Logf("A's own Kustomization: %v", err)
	_, err = kb.Reconcile(ctx, bStopped)
	require.NoError(t, err, "B's stop is blocked by A's refusal")
	gone(t, env, ns, "fx-b")
	cs, err := kc.Reconcile(ctx, c)
	require.NoError(t, err, "C's creation is blocked by A's refusal")
	assert.Equal(t, "created", actions(cs)["RayJob/fx-c"])

	ja, err := job(ctx, env, ns, "fx-a")
	require.NoError(t, err)
	assert.Equal(t, "lab-queue", ja.Labels["kueue.x-k8s.io/queue-name"])
	assert.Equal(t, rayv1.JobDeploymentStatusRunning, ja.Status.JobDeploymentStatus)
	assert.Equal(t, sa, snap(t, env, ns, "fx-a"), "A's refused commit restarted it")
}

// Deleting a run's Kustomization (the parent prunes it when its file
// leaves Git, or by hand) with deletionPolicy Orphan deletes nothing: the
// run keeps running, and a Kustomization created again from Git takes it
// over without a restart. With deletionPolicy Delete (the old shipped
// setting) the same deletion deletes the run. A RayJob deleted by hand is
// created again by the next reconcile, as a new run: what Git holds is
// applied, and nothing in Flux tells a deleted run from a missing one.
func TestDeletedKustomizationOrphansTheRun(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "fx-orphan"
	require.NoError(t, kueue.Queue(ctx, env, ns, "lab-queue", "fx-orphan", "32", waitFor))
	a, b := build(t, "fx-a", ns, ""), build(t, "fx-b", ns, "")

	ka := kustomization(env, "fx-a")
	_, err := ka.Reconcile(ctx, a)
	require.NoError(t, err)
	running(t, env, k, ns, "fx-a")
	before := snap(t, env, ns, "fx-a")
	cs, err := ka.Finalize(ctx)
	require.NoError(t, err)
	assert.Empty(t, actions(cs), "deletionPolicy Orphan deleted objects")
	ja, err := job(ctx, env, ns, "fx-a")
	require.NoError(t, err, "the run's RayJob went with its Kustomization")
	assert.Equal(t, rayv1.JobDeploymentStatusRunning, ja.Status.JobDeploymentStatus)
	again := kustomization(env, "fx-a")
	_, err = again.Reconcile(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, before, snap(t, env, ns, "fx-a"), "the re-created Kustomization restarted the run")

	kb := fluxapply.New(env.Client, fluxapply.Spec{Name: "fx-b", Namespace: "flux-system", Prune: true, DeletionPolicy: fluxapply.Delete})
	_, err = kb.Reconcile(ctx, b)
	require.NoError(t, err)
	cs, err = kb.Finalize(ctx)
	require.NoError(t, err)
	assert.Equal(t, "deleted", actions(cs)["RayJob/fx-b"], "deletionPolicy Delete")
	gone(t, env, ns, "fx-b")

	// A RayJob deleted by hand.
	require.NoError(t, env.Client.Delete(ctx, ja, client.PropagationPolicy("Background")))
	gone(t, env, ns, "fx-a")
	cs, err = again.Reconcile(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["RayJob/fx-a"], "the next reconcile re-creates a RayJob deleted by hand")
}

func concat(runs ...[]*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, r := range runs {
		out = append(out, r...)
	}
	return out
}

func rayJobOf(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			return o
		}
	}
	require.FailNow(t, "no RayJob in the build")
	return nil
}
