package afterapply

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// statusOf runs `nrl-k8s status -o json` and decodes it.
func statusOf(t *testing.T, kc, ns, run string) (runstatus.Report, int) {
	t.Helper()
	code, out, errs := clirun.Run("status", run, "-n", ns, "--kubeconfig", kc, "-o", "json")
	var r runstatus.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r), "stdout:\n%s\nstderr:\n%s", out, errs)
	return r, code
}

// waitStatus polls status until want holds.
func waitStatus(t *testing.T, kc, ns, run string, want func(runstatus.Report) bool) (runstatus.Report, int) {
	t.Helper()
	var r runstatus.Report
	var code int
	err := operator.Wait(context.Background(), 60*time.Second, "status of "+run, func(context.Context) (bool, string, error) {
		r, code = statusOf(t, kc, ns, run)
		return want(r), fmt.Sprintf("%s: %s", r.Verdict, r.Summary), nil
	})
	require.NoError(t, err)
	return r, code
}

func hasProblem(r runstatus.Report, text string) bool {
	for _, p := range r.Problems {
		if strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

func TestStatus(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	ctx := context.Background()

	t.Run("not found", func(t *testing.T) {
		require.NoError(t, env.CreateNamespace(ctx, "status-empty", ""))
		r, code := statusOf(t, kc, "status-empty", "nothing")
		require.Equal(t, runstatus.NotFound, r.Verdict)
		require.Equal(t, 3, code)
	})

	t.Run("Pod Security refuses the GB300 workers: stuck, with the cause", func(t *testing.T) {
		ns := "status-baseline"
		require.NoError(t, env.CreateNamespace(ctx, ns, "baseline"))
		prerequisites(t, env, ns)
		_, objs := render(t, ns, "psa")
		require.NoError(t, env.Apply(ctx, ns, objs))
		r, code := waitStatus(t, kc, ns, "psa", func(r runstatus.Report) bool { return r.Verdict == runstatus.Stuck })
		require.Equal(t, 1, code)
		require.True(t, hasProblem(r, "violates PodSecurity"), "%+v", r.Problems)
		require.Contains(t, r.Summary, "Initializing")
		_, out, _ := clirun.Run("status", "psa", "-n", ns, "--kubeconfig", kc)
		require.Contains(t, out, "FailedToCreateWorkerPod")
		require.Contains(t, out, "IPC_LOCK")
	})

	t.Run("missing ServiceAccount: stuck, with the cause", func(t *testing.T) {
		ns := "status-nosa"
		require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
		prerequisites(t, env, ns, "ServiceAccount")
		_, objs := render(t, ns, "nosa")
		require.NoError(t, env.Apply(ctx, ns, objs))
		r, code := waitStatus(t, kc, ns, "nosa", func(r runstatus.Report) bool { return r.Verdict == runstatus.Stuck })
		require.Equal(t, 1, code)
		require.True(t, hasProblem(r, "service account"), "%+v", r.Problems)
	})

	t.Run("suspended in the spec without a Kueue queue: stopped, whatever the annotation says", func(t *testing.T) { stoppedFromSpec(t, env, kc) })

	t.Run("running, then succeeded with the cluster cleaned up", func(t *testing.T) {
		ns := "status-run"
		require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
		prerequisites(t, env, ns)
		_, objs := render(t, ns, "good")
		for _, o := range objs {
			if o.GetKind() == "RayJob" {
				// KubeRay deletes the cluster ttlSecondsAfterFinished after
				// the job ends: 0 here, so the test sees the cleanup.
				require.NoError(t, unstructured.SetNestedField(o.Object, int64(0), "spec", "ttlSecondsAfterFinished"))
			}
		}
		require.NoError(t, env.Apply(ctx, ns, objs))
		r, code := waitStatus(t, kc, ns, "good", func(r runstatus.Report) bool {
			return len(r.RayClusters) == 1 && len(r.Pods) == 5
		})
		require.Equal(t, 0, code, r.Summary)
		require.Equal(t, runstatus.Progressing, r.Verdict, r.Summary)
		require.Equal(t, 5, r.PodPhases["Pending"])

		cluster, err := env.WaitForCluster(ctx, ns, r.RayClusters[0].Name, 60*time.Second)
		require.NoError(t, err)
		require.NoError(t, env.MarkRunningReady(ctx, cluster.Pods()))
		r, code = waitStatus(t, kc, ns, "good", func(r runstatus.Report) bool { return r.Verdict == runstatus.Running })
		require.Equal(t, 0, code)
		require.Equal(t, 5, r.PodPhases["Running"])
		require.NotEmpty(t, r.Services, "the head Service KubeRay created")
		for _, p := range r.Problems {
			require.NotEqual(t, runstatus.NotOwned, p.Reason, "KubeRay's cluster, Pods and Service are the run's (labelled, owned by UID): %+v", p)
		}

		// Without RUN: the namespace's runs, with the state the RayJob gives.
		code, out, errs := clirun.Run("status", "-n", ns, "--kubeconfig", kc, "-o", "json")
		require.Equal(t, 0, code, errs)
		var runs []runstatus.RunLine
		require.NoError(t, json.Unmarshal([]byte(out), &runs), out)
		require.Len(t, runs, 1, out)
		require.Equal(t, "good", runs[0].Run)
		require.Equal(t, runstatus.Running, runs[0].Verdict, runs[0].Summary)

		thiefSeesNoCluster(t, env, kc, ns, r.RayClusters[0].Name)

		job := r.RayJobs[0]
		env.Dashboard.Finish(ns, job.RayClusterName, rayv1.JobStatusSucceeded)
		r, code = waitStatus(t, kc, ns, "good", func(r runstatus.Report) bool {
			return r.Verdict == runstatus.Succeeded && r.RayJobs[0].Cleanup == "done"
		})
		require.Equal(t, 0, code)
		require.Empty(t, r.RayClusters)
	})
}

// thiefSeesNoCluster: another run's RayJob submitted to this run's
// cluster (clusterSelector) is named the cluster in its status by
// KubeRay; its status does not take the cluster or its Pods as its own.
func thiefSeesNoCluster(t *testing.T, env *operator.Env, kc, ns, cluster string) {
	t.Helper()
	thief := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayJob",
		"metadata": map[string]any{"name": "thief", "namespace": ns, "labels": map[string]any{vocab.InstanceLabel: "thief"}},
		"spec":     map[string]any{"entrypoint": "python x.py", "clusterSelector": map[string]any{"ray.io/cluster": cluster}},
	}}
	require.NoError(t, env.Apply(context.Background(), ns, []*unstructured.Unstructured{thief}))
	tr, _ := waitStatus(t, kc, ns, "thief", func(r runstatus.Report) bool { return len(r.RayJobs) == 1 && r.RayJobs[0].RayClusterName != "" })
	require.Empty(t, tr.RayClusters, "%+v", tr)
	require.Empty(t, tr.Pods)
	require.True(t, hasProblem(tr, "RayCluster "+cluster+" named by RayJob thief is not owned by it: ignored"), "%+v", tr.Problems)
}

// stoppedFromSpec: a RayJob suspended in its spec without a Kueue queue is
// stopped, its state annotation saying run.
func stoppedFromSpec(t *testing.T, env *operator.Env, kc string) {
	ctx := context.Background()
	ns := "status-stopped"
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	prerequisites(t, env, ns)
	_, objs := render(t, ns, "stp")
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			require.NoError(t, unstructured.SetNestedField(o.Object, true, "spec", "suspend"))
			o.SetAnnotations(map[string]string{vocab.StateAnnotation: string(runparams.Running)})
		}
	}
	require.NoError(t, env.Apply(ctx, ns, objs))
	r, code := waitStatus(t, kc, ns, "stp", func(r runstatus.Report) bool {
		return len(r.RayJobs) == 1 && r.RayJobs[0].JobDeploymentStatus == string(rayv1.JobDeploymentStatusSuspended)
	})
	require.Equal(t, 0, code)
	require.Equal(t, runstatus.Stopped, r.Verdict, r.Summary)
	require.Contains(t, r.Summary, "the run is stopped (suspended, no Kueue queue): RayJob stp (Suspended)")
}

// A Helm release is found by its release name: the chart labels every
// object app.kubernetes.io/instance=<release>, and Helm's rewrite of
// app.kubernetes.io/managed-by does not matter to status.
func TestStatusOfHelmRelease(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	helm := testenv.Tool(t, "NRL_HELM3")
	ctx := context.Background()
	ns := "status-helm"
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	chart := filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
	out, err := helmEnv(t, helm, "install", "hr1", chart, "--kubeconfig", kc, "-n", ns,
		"--set", "profile=generic-single-node-8gpu", "--set", "user=alice", "--set", "namespace="+ns).CombinedOutput()
	require.NoError(t, err, "%s", out)

	r, code := waitStatus(t, kc, ns, "hr1", func(r runstatus.Report) bool { return len(r.RayJobs) == 1 && len(r.RayClusters) == 1 })
	require.NotEqual(t, 3, code)
	require.NotEqual(t, runstatus.NotFound, r.Verdict)
	require.Equal(t, "hr1", r.RayJobs[0].Name)

	var job rayv1.RayJob
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hr1"}, &job))
	require.Equal(t, "Helm", job.Labels["app.kubernetes.io/managed-by"], "Helm's own label on what it installed")
}
