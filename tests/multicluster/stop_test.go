package multicluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// `state: stopped` in Git stops a dispatched run on its worker and frees
// its quota: the stopped render has no job object, so the sync prunes the
// manager's RayJob; MultiKueue then deletes the worker's copy (KubeRay's
// cluster and Pods go with it), and a second run, queued on the manager
// behind the first, is admitted. Only worker-1 has quota (16 GPUs), so
// both runs go there.
func TestMultiKueueStopInGit(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-stop"
	first := render(t, "mk-stop-first", ns)
	stopped := renderState(t, "mk-stop-first", ns, runparams.Stopped)
	second := render(t, "mk-stop-second", ns)
	require.Nil(t, stopped.job, "a stopped MultiKueue run renders no job object for the manager")
	require.NotEmpty(t, stopped.bundle, "a stopped run keeps its worker bundle (nothing there runs anything)")
	require.NoError(t, f.Queue(ctx, ns, first.podSecurity, "lab-queue", "lab-stop", []int{16, 0}, waitFor))

	deliver(t, f, ns, first)
	at := dispatched(t, f, ns, first.job.GetName())
	require.Equal(t, 0, at, "worker-1 holds the only quota")
	w := f.Workers[at]
	rc, err := w.Env.RayClusterOf(ctx, ns, first.job.GetName(), waitFor)
	require.NoError(t, err)
	_, err = w.Env.WaitForCluster(ctx, ns, rc, waitFor)
	require.NoError(t, err)

	deliver(t, f, ns, second)
	time.Sleep(3 * time.Second) // give the manager's Kueue time to act on it
	for _, wk := range f.Workers {
		err := wk.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: second.job.GetName()}, &rayv1.RayJob{})
		require.True(t, apierrors.IsNotFound(err), "the second run was dispatched to %s beside the first: %v", wk.Name, err)
	}

	// The commit that stops the first run, synced as Argo CD syncs it: the
	// manager's Application prunes the RayJob, each worker's re-applies
	// the bundle.
	require.NoError(t, f.Manager.Env.Sync(ctx, ns, argosync.Manager, []*unstructured.Unstructured{first.job}, nil))
	for _, wk := range f.Workers {
		require.NoError(t, wk.Env.Sync(ctx, ns, argosync.Manager, first.bundle, stopped.bundle), wk.Name)
	}
	stoppedOn(t, f, w, ns, first.job.GetName(), rc)

	assert.Equal(t, at, dispatched(t, f, ns, second.job.GetName()), "the second run took the freed quota")
}

// stoppedOn waits, once the manager's RayJob name was pruned, until its
// copy on worker w and the Pods of its cluster rc are gone, and asserts
// the manager's RayJob stays gone.
func stoppedOn(t *testing.T, f *multicluster.Fleet, w multicluster.Cluster, ns, name, rc string) {
	t.Helper()
	ctx := context.Background()
	begin := time.Now()
	require.NoError(t, operator.Wait(ctx, waitFor, "the run's RayJob and Pods to go from "+w.Name, func(ctx context.Context) (bool, string, error) {
		// What kube-controller-manager's garbage collector does on both
		// sides: the manager's Workload of the pruned RayJob, the worker's
		// RayCluster of the deleted RayJob and its Pods.
		if err := f.Manager.Env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		if err := collectClusters(ctx, w.Env, ns); err != nil {
			return false, "", err
		}
		if err := w.Env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		err := w.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rayv1.RayJob{})
		if client.IgnoreNotFound(err) != nil {
			return false, "", err
		}
		var pods corev1.PodList
		if err := w.Env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": rc}); err != nil {
			return false, "", err
		}
		return err != nil && len(pods.Items) == 0, fmt.Sprintf("RayJob: %v; %d Pods", err, len(pods.Items)), nil
	}), "the manager's Kueue log on %s:\n%s", ns, kueueLog(f, ns))
	t.Logf("stopped on %s %s after the sync", w.Name, time.Since(begin).Round(time.Millisecond))
	err := f.Manager.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rayv1.RayJob{})
	assert.True(t, apierrors.IsNotFound(err), "the stopped run's RayJob is back on the manager: %v", err)
}

// collectClusters deletes the RayClusters in ns whose owning RayJob is
// gone, as the garbage collector this tier does not run would.
func collectClusters(ctx context.Context, env *operator.Env, ns string) error {
	var list rayv1.RayClusterList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].OwnerReferences {
			if ref.Kind != "RayJob" {
				continue
			}
			var job rayv1.RayJob
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &job)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err == nil && job.UID == ref.UID {
				continue
			}
			if err := env.Client.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
