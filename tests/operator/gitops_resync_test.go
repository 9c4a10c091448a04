package operator_test

import (
	"context"
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
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Argo CD syncs the shipped GB300 KAI run with ServerSideApply=true
// (field manager argocd-controller, conflicts forced), in rayjob and in
// raycluster mode; KubeRay creates the cluster, its Pods run, the job is
// submitted. Only KubeRay (of argosync.ControllerManagers) then owns
// fields of what Git holds besides Argo CD. A forced re-apply of the same
// Git state never restarts the run: the RayCluster and its Pods are the
// same objects, the job is not submitted again, and every applied object
// keeps its spec, but for one flip: in rayjob mode KubeRay has written an
// empty scaleStrategy into each worker group of the RayJob, which owns
// the atomic workerGroupSpecs list, and the forced apply takes the list
// back without it (a generation bump to an equivalent spec). The shipped
// Application ignores KubeRay's fields and applies only out-of-sync
// objects, so Argo CD neither shows nor makes that flip.
func TestArgoCDResyncNeverRestarts(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		t.Run(string(mode), func(t *testing.T) {
			ns := fixtures.NamespaceFor("argocd-" + string(mode))
			objs := fixtures.Objects(t, fixtures.Request(fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu"), fixtures.As(mode)))
			sas, _ := fixtures.References(objs)
			require.NoError(t, env.SetUp(ctx, ns, "", sas, nil))
			require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
			cluster, job := running(t, env, ns, objs)

			before := map[string]*unstructured.Unstructured{}
			var rc rayv1.RayCluster
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rc))
			pods, err := env.PodUIDs(ctx, ns)
			require.NoError(t, err)
			for _, o := range objs {
				live := live(t, env, ns, o)
				before[o.GetKind()+"/"+o.GetName()] = live
				others := argosync.Controllers(live.GetManagedFields())
				owners, err := argosync.Owners(live.GetManagedFields())
				require.NoError(t, err)
				for _, m := range others {
					t.Logf("%s %s: fields of %s: %v", o.GetKind(), o.GetName(), m, append(owners[m], owners[m+"/status"]...))
				}
				assert.Subset(t, argosync.ControllerManagers, others, "%s %s: a manager the shipped Application does not ignore", o.GetKind(), o.GetName())
			}

			require.NoError(t, env.ApplyAs(ctx, ns, argosync.Manager, objs))
			time.Sleep(2 * time.Second) // give KubeRay time to act on it
			flipped := false
			for _, o := range objs {
				want, stripped := withoutEmptyScaleStrategy(before[o.GetKind()+"/"+o.GetName()])
				flipped = flipped || stripped
				after := live(t, env, ns, o)
				assert.Equal(t, want.Object["spec"], after.Object["spec"], "%s %s: the re-sync changed more than KubeRay's empty scaleStrategy", o.GetKind(), o.GetName())
				if stripped {
					want.SetGeneration(want.GetGeneration() + 1)
				}
				assert.Equal(t, want.GetGeneration(), after.GetGeneration(), "%s %s", o.GetKind(), o.GetName())
			}
			assert.Equal(t, mode == runparams.RayJob, flipped, "KubeRay writes an empty scaleStrategy into a RayJob's worker groups (rayjob mode only)")
			var again rayv1.RayCluster
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &again), "the RayCluster is gone after the re-sync")
			assert.Equal(t, rc.UID, again.UID, "the RayCluster was recreated")
			assert.Equal(t, rc.Generation, again.Generation, "the RayCluster's spec changed")
			podsAfter, err := env.PodUIDs(ctx, ns)
			require.NoError(t, err)
			assert.Equal(t, pods, podsAfter, "Pods were recreated")
			n := 0
			for _, s := range env.Dashboard.Submissions(ns) {
				if s.RayJob == job {
					n++
				}
			}
			assert.Equal(t, 1, n, "the job was submitted again")
		})
	}
}

// running waits for the run's RayCluster (the RayJob's, or the one its
// clusterSelector names), marks its Pods Running and Ready and waits for
// the RayJob to run; it returns the cluster's and the job's names.
func running(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) (cluster, job string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			job = o.GetName()
		}
	}
	require.NotEmpty(t, job)
	cluster, err := env.RayClusterOf(ctx, ns, job, createTimeout)
	require.NoError(t, err)
	c, err := env.WaitForCluster(ctx, ns, cluster, createTimeout)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	_, err = env.WaitForJobDeploymentStatus(ctx, ns, job, rayv1.JobDeploymentStatusRunning, submitTimeout)
	require.NoError(t, err)
	return cluster, job
}

// live is applied object o as the server holds it in ns.
func live(t *testing.T, env *operator.Env, ns string, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u, err := env.Live(context.Background(), ns, o)
	require.NoError(t, err)
	return u
}

// withoutEmptyScaleStrategy is a copy of live object u without the empty
// scaleStrategy KubeRay writes into each worker group of a RayJob's
// rayClusterSpec, and whether it had one. The render does not name it,
// and workerGroupSpecs is an atomic list in KubeRay's CRD, so a forced
// apply takes the list back without it: a generation bump of the RayJob,
// to an equivalent spec.
func withoutEmptyScaleStrategy(u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	out := u.DeepCopy()
	groups, _, _ := unstructured.NestedSlice(out.Object, "spec", "rayClusterSpec", "workerGroupSpecs")
	stripped := false
	for _, g := range groups {
		m, _ := g.(map[string]any)
		if s, ok := m["scaleStrategy"].(map[string]any); ok && len(s) == 0 {
			delete(m, "scaleStrategy")
			stripped = true
		}
	}
	if stripped {
		_ = unstructured.SetNestedSlice(out.Object, groups, "spec", "rayClusterSpec", "workerGroupSpecs")
	}
	return out, stripped
}
