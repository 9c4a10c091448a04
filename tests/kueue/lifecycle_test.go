package kueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// A Kueue run Git declares stopped renders without its RayJob (Kueue owns
// spec.suspend and would start a suspended job it admitted): the sync that
// carries the commit prunes it, which stops the run and gives its quota to
// the next run in the queue; later syncs of the stopped state create
// nothing. Two runs of 16 GPUs share a ClusterQueue of 16.
func TestStoppedKueueRunFreesItsQuota(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-stop"
	queue(t, env, ns, "lab-stop", "16")
	first := stateRender(t, "kq-first", ns, "")
	stopped := stateRender(t, "kq-first", ns, runparams.Stopped)
	second := stateRender(t, "kq-second", ns, "")
	for _, o := range stopped {
		assert.NotEqual(t, "RayJob", o.GetKind(), "a stopped Kueue run renders its RayJob")
	}

	require.NoError(t, env.Sync(ctx, ns, argosync.Manager, nil, first))
	admitted(t, env, k, ns, "kq-first")
	require.NoError(t, env.Sync(ctx, ns, argosync.Manager, nil, second))
	time.Sleep(2 * time.Second) // give Kueue time to act on it
	assert.True(t, rayJob(t, env, ns, "kq-second").Spec.Suspend, "the second run was admitted beside the first: the quota is 16 GPUs")

	// The commit that stops the first run.
	require.NoError(t, env.Sync(ctx, ns, argosync.Manager, first, stopped))
	require.NoError(t, operator.Wait(ctx, waitFor, "the first run's RayJob to go", func(ctx context.Context) (bool, string, error) {
		if err := env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kq-first"}, &rayv1.RayJob{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	}))
	require.NoError(t, env.CollectOrphans(ctx, ns)) // its Workload, once it is gone
	admitted(t, env, k, ns, "kq-second")

	// Later syncs of the stopped state create nothing of the first run.
	require.NoError(t, env.Sync(ctx, ns, argosync.Manager, stopped, stopped))
	time.Sleep(2 * time.Second) // give Kueue and KubeRay time to act on it
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kq-first"}, &rayv1.RayJob{})
	assert.True(t, apierrors.IsNotFound(err), "a re-sync re-created the stopped run: %v", err)
	assert.False(t, rayJob(t, env, ns, "kq-second").Spec.Suspend, "the second run was suspended again")
}

// stateRender is the shipped H100 Kueue run name in ns, in state (""
// is running), as objects to apply.
func stateRender(t *testing.T, name, ns string, state runparams.State) []*unstructured.Unstructured {
	t.Helper()
	run := fixtures.As(runparams.RayJob)
	run.Name, run.State = name, state
	req := fixtures.Request(fixtures.ShippedProfile(t, "h100-kueue-2n8g"), run)
	req.Namespace = ns
	return fixtures.Objects(t, req)
}

// admitted waits until Kueue has admitted RayJob name and KubeRay has
// created its 3 Pods.
func admitted(t *testing.T, env *operator.Env, k *kueue.Kueue, ns, name string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), waitFor, "Kueue to admit "+name+" and KubeRay to create its 3 Pods", func(ctx context.Context) (bool, string, error) {
		j := rayJob(t, env, ns, name)
		c, err := env.WaitForCluster(ctx, ns, j.Status.RayClusterName, time.Second)
		if err != nil || j.Spec.Suspend {
			return false, fmt.Sprintf("suspend=%v, %v", j.Spec.Suspend, err), nil
		}
		return len(c.Pods()) == 3, fmt.Sprintf("%d Pods", len(c.Pods())), nil
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
}
