package operator_test

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

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// stopTimeout bounds KubeRay's deletion of a stopped run's cluster.
const stopTimeout = 60 * time.Second

// A run Git declares stopped (state: stopped) is stopped by the sync that
// carries the commit, and stays stopped through every later sync, also
// when its RayJob or RayCluster is deleted by hand and the sync re-creates
// it (Argo CD's automated sync re-creates a Missing object): the shipped
// GB300 KAI run, in rayjob and raycluster mode, synced as the shipped
// Application syncs (server-side apply as argocd-controller, prune).
func TestStoppedRunStaysStopped(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		t.Run(string(mode), func(t *testing.T) {
			ns := fixtures.NamespaceFor("stop-" + string(mode))
			entry := fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu")
			run := fixtures.Objects(t, fixtures.Request(entry, fixtures.As(mode)))
			stop := fixtures.As(mode)
			stop.State = runparams.Stopped
			stopped := fixtures.Objects(t, fixtures.Request(entry, stop))
			sas, _ := fixtures.References(run)
			require.NoError(t, env.SetUp(ctx, ns, "", sas, nil))
			require.NoError(t, env.Sync(ctx, ns, argosync.Manager, nil, run))
			cluster, job := running(t, env, ns, run)

			// The commit that stops it.
			require.NoError(t, env.Sync(ctx, ns, argosync.Manager, run, stopped))
			noCluster(t, env, ns, cluster)
			if mode == runparams.RayJob {
				_, err := env.WaitForJobDeploymentStatus(ctx, ns, job, rayv1.JobDeploymentStatusSuspended, stopTimeout)
				require.NoError(t, err)
			}
			requireStopped(t, env, ns, stopped)

			// Later syncs of the same Git state (any commit elsewhere).
			require.NoError(t, env.Sync(ctx, ns, argosync.Manager, stopped, stopped))
			time.Sleep(2 * time.Second) // give KubeRay time to act on it
			requireStopped(t, env, ns, stopped)

			// Deleted by hand, then re-created by the next sync: created
			// stopped, it never starts.
			for _, o := range stopped {
				if o.GetKind() == "RayJob" || o.GetKind() == "RayCluster" {
					deleted(t, env, ns, o)
				}
			}
			require.NoError(t, env.Sync(ctx, ns, argosync.Manager, stopped, stopped))
			time.Sleep(3 * time.Second) // give KubeRay time to act on it
			requireStopped(t, env, ns, stopped)
			n := 0
			for _, s := range env.Dashboard.Submissions(ns) {
				if s.RayJob == job {
					n++
				}
			}
			assert.Equal(t, 1, n, "the stopped run's job was submitted again")

			// nrl-k8s status says so.
			c, err := kube.FromConfig(env.Server.Config, ns, kube.Options{})
			require.NoError(t, err)
			st, err := runstatus.Collect(ctx, c, ns, stopped[0].GetLabels()["app.kubernetes.io/instance"], time.Now())
			require.NoError(t, err)
			assert.Equal(t, runstatus.Stopped, st.Verdict, st.Summary)
			assert.Contains(t, st.Summary, "no Pod runs")
		})
	}
}

// A finished run (KubeRay completed its RayJob and deleted its cluster)
// is not started again by later syncs of the same Git state, nor by the
// commit that declares it stopped.
func TestFinishedRunStaysFinished(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	ns := fixtures.NamespaceFor("finished")
	entry := fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu")
	run := fixtures.Objects(t, fixtures.Request(entry, fixtures.As(runparams.RayJob)))
	stop := fixtures.As(runparams.RayJob)
	stop.State = runparams.Stopped
	stopped := fixtures.Objects(t, fixtures.Request(entry, stop))
	sas, _ := fixtures.References(run)
	require.NoError(t, env.SetUp(ctx, ns, "", sas, nil))
	require.NoError(t, env.Sync(ctx, ns, argosync.Manager, nil, run))
	cluster, job := running(t, env, ns, run)
	env.Dashboard.Finish(ns, cluster, rayv1.JobStatusSucceeded)
	_, err := env.WaitForJobDeploymentStatus(ctx, ns, job, rayv1.JobDeploymentStatusComplete, stopTimeout)
	require.NoError(t, err)

	for i, next := range [][]*unstructured.Unstructured{run, run, stopped, stopped} {
		prev := run
		if i > 2 {
			prev = stopped
		}
		require.NoError(t, env.Sync(ctx, ns, argosync.Manager, prev, next), "sync %d", i)
		time.Sleep(2 * time.Second) // give KubeRay time to act on it
		var rj rayv1.RayJob
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: job}, &rj))
		assert.Equal(t, rayv1.JobDeploymentStatusComplete, rj.Status.JobDeploymentStatus, "sync %d", i)
		health, _ := argohealth.Check(t, argohealth.Script(t, "rayjob-health.lua"), &rj)
		assert.Equal(t, "Healthy", health, "sync %d", i)
	}
	assert.Len(t, env.Dashboard.Submissions(ns), 1, "the finished job was submitted again")
}

// noCluster waits until RayCluster name is gone from ns, its Pods
// collected (rayjob mode: KubeRay deletes a suspended RayJob's cluster), or
// has no Pods left
// (raycluster mode: KubeRay deletes a suspended RayCluster's Pods).
func noCluster(t *testing.T, env *operator.Env, ns, name string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), stopTimeout, "KubeRay to stop "+name, func(ctx context.Context) (bool, string, error) {
		if err := env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		pods, err := env.PodUIDs(ctx, ns)
		if err != nil {
			return false, "", err
		}
		var rc rayv1.RayCluster
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rc)
		if apierrors.IsNotFound(err) {
			return len(pods) == 0, fmt.Sprintf("RayCluster gone, %d Pods", len(pods)), nil
		}
		if err != nil {
			return false, "", err
		}
		return len(pods) == 0 && rc.Spec.Suspend != nil && *rc.Spec.Suspend, fmt.Sprintf("RayCluster %s, %d Pods", rc.Status.State, len(pods)), nil //nolint:staticcheck // State is deprecated in KubeRay but still written
	}))
}

// requireStopped says the stopped run's objects are live, stopped as
// rendered, with no Pod running and no RayCluster besides a suspended one,
// and that Argo CD's health check says "stopped".
func requireStopped(t *testing.T, env *operator.Env, ns string, stopped []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	pods, err := env.PodUIDs(ctx, ns)
	require.NoError(t, err)
	assert.Empty(t, pods, "a stopped run has Pods")
	var clusters rayv1.RayClusterList
	require.NoError(t, env.Client.List(ctx, &clusters, client.InNamespace(ns)))
	for _, c := range clusters.Items {
		assert.True(t, c.Spec.Suspend != nil && *c.Spec.Suspend, "RayCluster %s of a stopped run is not suspended", c.Name)
	}
	for _, o := range stopped {
		if o.GetKind() != "RayJob" && o.GetKind() != "RayCluster" {
			continue
		}
		u := live(t, env, ns, o)
		suspend, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		assert.True(t, suspend, "%s %s", o.GetKind(), o.GetName())
		script := "rayjob-health.lua"
		if o.GetKind() == "RayCluster" {
			script = "raycluster-health.lua"
		}
		health, msg := argohealth.Check(t, argohealth.Script(t, script), u.Object)
		if health == "Progressing" { // still deleting: ask again once it settled
			time.Sleep(2 * time.Second)
			health, msg = argohealth.Check(t, argohealth.Script(t, script), live(t, env, ns, o).Object)
		}
		assert.Equal(t, "Suspended", health, "%s %s: %s", o.GetKind(), o.GetName(), msg)
		assert.Contains(t, msg, "stopped (state: stopped in Git)")
	}
}

// deleted deletes o from ns, as `kubectl delete` does, and waits until it
// is gone (KubeRay removes its finalizer).
func deleted(t *testing.T, env *operator.Env, ns string, o *unstructured.Unstructured) {
	t.Helper()
	u := o.DeepCopy()
	u.SetNamespace(ns)
	require.NoError(t, env.Client.Delete(context.Background(), u))
	require.NoError(t, operator.Wait(context.Background(), stopTimeout, "KubeRay to let "+o.GetName()+" go", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u.DeepCopy())
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	}))
}
