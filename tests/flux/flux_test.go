// Package flux_test is the Flux tier: runs rendered from the shipped H100
// Kueue profile are reconciled commit by commit as Flux's
// kustomize-controller reconciles a Kustomization (internal/fluxapply:
// fluxcd/pkg/ssa configured as the controller configures it), against the
// real kube-apiserver with KubeRay's reconcilers (internal/operator) and
// Kueue's own manager (internal/kueue). It shows what the shipped per-run
// Kustomization (gitops/flux/kustomization.yaml) promises: a commit
// elsewhere restarts nothing, a stop and a start in Git take effect, a run
// removed from Git is pruned, a refused entry blocks only its own run, and
// deleting a run's Kustomization (deletionPolicy: Orphan) leaves the run
// running; and the tree `render-all --flux` generates, reconciled as a
// parent Kustomization and one per run, takes a run out by its
// state: removed.
package flux_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the Flux tier", kueue.StopShared))
}

// waitFor bounds each wait for Kueue or KubeRay on 2 shared cores.
const waitFor = 60 * time.Second

// profile is the shipped Kueue profile every run here renders with:
// 2 workers x 8 GPUs, LocalQueue lab-queue.
const profile = "h100-kueue-2n8g"

// build is run name's render in ns, as kustomize build of its folder
// gives it to the controller: state "" is running; overrides are the
// run's (infra.* ones change the profile).
func build(t *testing.T, name, ns string, state runparams.State, overrides ...string) []*unstructured.Unstructured {
	t.Helper()
	run := fixtures.As(runparams.RayJob)
	run.Name, run.State = name, state
	req := fixtures.Request(fixtures.ShippedProfile(t, profile), run, overrides...)
	req.Namespace = ns
	return fixtures.Objects(t, req)
}

// kustomization is the shipped per-run Kustomization's reconciler for run
// (prune, force off, deletionPolicy Orphan; gitops/flux/kustomization.yaml).
func kustomization(env *operator.Env, run string) *fluxapply.Kustomization {
	return fluxapply.New(env.Client, fluxapply.Spec{
		Name: run, Namespace: "flux-system", Prune: true, DeletionPolicy: fluxapply.Orphan,
	})
}

// running waits until Kueue admitted RayJob name, KubeRay created its 3
// Pods (marked running and ready here) and the job runs, and returns the
// RayJob.
func running(t *testing.T, env *operator.Env, k *kueue.Kueue, ns, name string) *rayv1.RayJob {
	t.Helper()
	ctx := context.Background()
	var c *operator.Cluster
	require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to admit "+name+" and KubeRay to create its 3 Pods", func(ctx context.Context) (bool, string, error) {
		j, err := job(ctx, env, ns, name)
		if err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		got, err := env.WaitForCluster(ctx, ns, j.Status.RayClusterName, time.Second)
		if err != nil || j.Spec.Suspend {
			return false, fmt.Sprintf("suspend=%v, %v", j.Spec.Suspend, err), nil
		}
		c = got
		return len(c.Pods()) == 3, fmt.Sprintf("%d Pods", len(c.Pods())), nil
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
	require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	j, err := env.WaitForJobDeploymentStatus(ctx, ns, name, rayv1.JobDeploymentStatusRunning, waitFor)
	require.NoError(t, err)
	return j
}

func job(ctx context.Context, env *operator.Env, ns, name string) (*rayv1.RayJob, error) {
	var j rayv1.RayJob
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)
	return &j, err
}

// gone waits until RayJob name is deleted (and its Pods and Workload
// collected: this tier runs no garbage collector).
func gone(t *testing.T, env *operator.Env, ns, name string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), waitFor, "RayJob "+name+" to go", func(ctx context.Context) (bool, string, error) {
		if err := env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		_, err := job(ctx, env, ns, name)
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	}))
	require.NoError(t, env.CollectOrphans(context.Background(), ns))
}

// actions maps each applied or deleted object ("Kind/name") to what the
// reconcile did with it.
func actions(cs *ssa.ChangeSet) map[string]string {
	out := map[string]string{}
	if cs == nil {
		return out
	}
	for _, e := range cs.Entries {
		out[e.ObjMetadata.GroupKind.Kind+"/"+e.ObjMetadata.Name] = e.Action.String()
	}
	return out
}

// snapshot is what a restart would change: the RayCluster's UID, the
// Pods' UIDs, the number of job submissions.
type snapshot struct {
	cluster     types.UID
	pods        []types.UID
	submissions int
}

func snap(t *testing.T, env *operator.Env, ns, name string) snapshot {
	t.Helper()
	j, err := job(context.Background(), env, ns, name)
	require.NoError(t, err)
	var rc rayv1.RayCluster
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: j.Status.RayClusterName}, &rc))
	pods, err := env.PodUIDs(context.Background(), ns)
	require.NoError(t, err)
	n := 0
	for _, s := range env.Dashboard.Submissions(ns) {
		if s.RayJob == name {
			n++
		}
	}
	return snapshot{cluster: rc.UID, pods: pods, submissions: n}
}
