package afterapply

import (
	"context"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// TestHelmStopAndStart: a run's life through the chart's state value,
// under Helm 3 and 4, against KubeRay's reconcilers. helm upgrade
// --reuse-values --set state=stopped passes the upgrade guard and stops the
// run (Helm 4 only with --force-conflicts, see upgradeState): the RayJob suspended and annotated, KubeRay deletes its cluster and
// keeps the RayJob (Suspended). helm upgrade --set state=run, with a new
// override, passes too (the live RayJob is stopped) and KubeRay starts it
// again on a new cluster from the spec as it is then; a later upgrade of
// the running run is refused again.
func TestHelmStopAndStart(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	eachHelm(t, env, "state-", func(t *testing.T, h helmCLI, ns string, helm4 bool) {
		h.must(t, "install", "st", chartDir(t), "--set", "profile=generic-single-node-8gpu", "--set", "user=alice")
		first, err := env.RayClusterOf(ctx, ns, "st", 60*time.Second)
		require.NoError(t, err)

		h.upgradeState(t, helm4, true, "st", "--set", "state=stopped")
		rj, err := env.WaitForJobDeploymentStatus(ctx, ns, "st", rayv1.JobDeploymentStatusSuspended, 60*time.Second)
		require.NoError(t, err)
		assert.True(t, rj.Spec.Suspend)
		assert.Equal(t, string(runparams.Stopped), rj.Annotations[vocab.StateAnnotation])
		clusterGone(t, env, ns, first)

		h.upgradeState(t, helm4, false, "st", "--set", "state=run", "--set-json", `overrides=["grpo.max_num_steps=3"]`)
		var started rayv1.RayJob
		require.True(t, exists(t, env, &started, ns, "st"))
		assert.False(t, started.Spec.Suspend)
		assert.NotContains(t, started.Annotations, vocab.StateAnnotation)
		assert.Contains(t, started.Spec.Entrypoint, "grpo.max_num_steps=3", "the spec as it is now")
		require.NoError(t, operator.Wait(ctx, 60*time.Second, "KubeRay to start st again", func(ctx context.Context) (bool, string, error) {
			var rj rayv1.RayJob
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "st"}, &rj); err != nil {
				return false, "", err
			}
			name := rj.Status.RayClusterName
			return name != "" && name != first, fmt.Sprintf("cluster %q, %s", name, rj.Status.JobDeploymentStatus), nil
		}))

		out, err := h.run(t, "upgrade", "st", chartDir(t), "--reuse-values", "--set", "image=registry.example/nemo-rl:v2")
		require.Error(t, err, out)
		assert.Contains(t, out, "nemo-rl-run: helm upgrade of run st: RayJob "+ns+"/st exists")
		h.must(t, "uninstall", "st")
		gone(t, env, &rayv1.RayJob{}, ns, "st")
	})
}

// clusterGone waits until KubeRay deleted RayCluster name (a suspended
// RayJob's cluster) and its Pods are collected.
func clusterGone(t *testing.T, env *operator.Env, ns, name string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), 60*time.Second, "KubeRay to delete "+name, func(ctx context.Context) (bool, string, error) {
		if err := env.CollectOrphans(ctx, ns); err != nil {
			return false, "", err
		}
		pods, err := env.PodUIDs(ctx, ns)
		if err != nil {
			return false, "", err
		}
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rayv1.RayCluster{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, "", err
		}
		return apierrors.IsNotFound(err) && len(pods) == 0, fmt.Sprintf("RayCluster there: %v, %d Pods", err == nil, len(pods)), nil
	}))
}

// upgradeState runs helm upgrade --reuse-values ARGS. Helm 4 applies
// server-side, and KubeRay's reconciler has written the RayJob's
// spec.rayClusterSpec.workerGroupSpecs (an atomic list, with its
// scaleStrategy: {}) as its own field manager since it created the
// cluster: the apply conflicts until --force-conflicts (the chart README
// says so). mustConflict: Helm 4's first try must fail so, and nothing
// else.
func (h helmCLI) upgradeState(t *testing.T, helm4, mustConflict bool, release string, args ...string) {
	t.Helper()
	up := append([]string{"upgrade", release, chartDir(t), "--reuse-values"}, args...)
	if !helm4 {
		h.must(t, up...)
		return
	}
	out, err := h.run(t, up...)
	if mustConflict {
		require.Error(t, err, out)
	}
	if err != nil {
		assert.Contains(t, out, "conflict with \"kuberay-operator\"")
		assert.Contains(t, out, ".spec.rayClusterSpec.workerGroupSpecs")
		h.must(t, append(up, "--force-conflicts")...)
	}
}
