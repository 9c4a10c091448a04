package afterapply

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

var (
	rayJobs     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
)

// argo reads RayJobs and RayClusters back as Argo CD does (the dynamic
// client: the object's JSON as the API server holds it, what Argo CD hands
// a health check) and runs the shipped health checks on them.
type argo struct {
	t                  *testing.T
	dyn                dynamic.Interface
	ns                 string
	jobLua, clusterLua string
}

func newArgo(t *testing.T, env *operator.Env, ns string) *argo {
	dyn, err := dynamic.NewForConfig(env.Server.Config)
	require.NoError(t, err)
	return &argo{t: t, dyn: dyn, ns: ns,
		jobLua:     argohealth.Script(t, "rayjob-health.lua"),
		clusterLua: argohealth.Script(t, "raycluster-health.lua")}
}

func (a *argo) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	a.t.Helper()
	u, err := a.dyn.Resource(gvr).Namespace(a.ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(a.t, err)
	return u
}

// health runs the check of u's kind on u and logs the verdict with the
// status fields it came from.
func (a *argo) health(stage string, u *unstructured.Unstructured) (status, message string) {
	a.t.Helper()
	script := a.jobLua
	if u.GetKind() == "RayCluster" {
		script = a.clusterLua
	}
	status, message = argohealth.Check(a.t, script, u.Object)
	a.t.Logf("%s: %s %s (%s) -> %s: %s", stage, u.GetKind(), u.GetName(), statusLine(u), status, message)
	return status, message
}

// statusLine is the status fields the checks read, for the log.
func statusLine(u *unstructured.Unstructured) string {
	if u.GetKind() == "RayJob" {
		st, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus")
		job, _, _ := unstructured.NestedString(u.Object, "status", "jobStatus")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "rayClusterStatus", "conditions")
		return fmt.Sprintf("jobDeploymentStatus %q, jobStatus %q, rayClusterStatus.conditions %s", st, job, condLine(conds))
	}
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	return fmt.Sprintf("state %q, conditions %s", state, condLine(conds))
}

func condLine(conds []any) string {
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v/%v", m["type"], m["status"], m["reason"]))
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// waitFor polls name until cond holds of the object the server returns.
func (a *argo) waitFor(gvr schema.GroupVersionResource, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	a.t.Helper()
	var u *unstructured.Unstructured
	err := operator.Wait(context.Background(), 60*time.Second, fmt.Sprintf("%s %s", name, what), func(ctx context.Context) (bool, string, error) {
		got, err := a.dyn.Resource(gvr).Namespace(a.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return false, "", nil
			}
			return false, err.Error(), nil
		}
		u = got
		return cond(u), statusLine(u), nil
	})
	require.NoError(a.t, err)
	return u
}

// jobState holds once the RayJob is in deployment status want and, when
// job is not empty, its Ray job in status job.
func jobState(want rayv1.JobDeploymentStatus, job rayv1.JobStatus) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		st, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus")
		js, _, _ := unstructured.NestedString(u.Object, "status", "jobStatus")
		return st == string(want) && (job == "" || js == string(job))
	}
}

func clusterState(want rayv1.ClusterState) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		return st == string(want)
	}
}

// TestArgoCDHealth runs the shipped Argo CD health checks
// (gitops/argocd/*.lua) on the RayJob and RayCluster of a GB300 run exactly
// as KubeRay v1.5.0's reconcilers wrote them into the real API server, at
// every stage of the run: created, cluster starting, running, succeeded,
// failed, and pods refused by Pod Security. tests/gitops covers the same
// scripts on every status KubeRay's types define.
func TestArgoCDHealth(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()

	// start applies run name into a fresh namespace and returns the
	// health checker and the RayCluster KubeRay created for the RayJob.
	start := func(t *testing.T, ns, name, podSecurity string) (*argo, string) {
		require.NoError(t, env.CreateNamespace(ctx, ns, podSecurity))
		prerequisites(t, env, ns)
		_, objs := render(t, ns, name)
		a := newArgo(t, env, ns)
		require.NoError(t, env.Apply(ctx, ns, objs))
		// Just created: KubeRay may not have written any status yet.
		st, _ := a.health("created", a.get(rayJobs, name))
		require.Equal(t, "Progressing", st)
		cluster, err := env.RayClusterOf(ctx, ns, name, 60*time.Second)
		require.NoError(t, err)
		return a, cluster
	}

	// running starts run name and brings it to Running; it checks the
	// cluster while its Pods are Pending, then Ready.
	running := func(t *testing.T, ns, name string) (*argo, string) {
		a, cluster := start(t, ns, name, "privileged")
		c, err := env.WaitForCluster(ctx, ns, cluster, 60*time.Second)
		require.NoError(t, err)
		st, _ := a.health("initializing", a.waitFor(rayJobs, name, "Initializing", jobState(rayv1.JobDeploymentStatusInitializing, "")))
		require.Equal(t, "Progressing", st)
		st, _ = a.health("pods pending", a.get(rayClusters, cluster))
		require.Equal(t, "Progressing", st)

		require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
		st, _ = a.health("pods ready", a.waitFor(rayClusters, cluster, "ready", clusterState(rayv1.Ready)))
		require.Equal(t, "Healthy", st)
		st, msg := a.health("running", a.waitFor(rayJobs, name, "Running, job RUNNING", jobState(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)))
		require.Equal(t, "Progressing", st, "a running training job is not done: Argo CD waits")
		require.Contains(t, msg, "Running, job RUNNING")
		return a, cluster
	}

	// Each run is brought to Running, then its job ends as the dashboard
	// reports it and KubeRay's RayJob follows.
	for _, c := range []struct {
		test, ns, name string
		job            rayv1.JobStatus
		deployment     rayv1.JobDeploymentStatus
		stage, health  string
		message        string
	}{
		{"created, running, succeeded", "argo-ok", "ok", rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, "Complete", "Healthy", "Complete, job SUCCEEDED"},
		{"failed", "argo-fail", "bad", rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, "Failed", "Degraded", "job FAILED"},
	} {
		t.Run(c.test, func(t *testing.T) {
			a, cluster := running(t, c.ns, c.name)
			env.Dashboard.Finish(c.ns, cluster, c.job)
			st, msg := a.health(c.stage, a.waitFor(rayJobs, c.name, c.stage, jobState(c.deployment, c.job)))
			require.Equal(t, c.health, st)
			require.Contains(t, msg, c.message)
		})
	}

	t.Run("Pod Security refuses the workers", func(t *testing.T) {
		ns := "argo-baseline"
		a, cluster := start(t, ns, "psa", "baseline")
		rc := a.waitFor(rayClusters, cluster, "a ReplicaFailure condition", func(u *unstructured.Unstructured) bool {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			return hasCond(conds, string(rayv1.RayClusterReplicaFailure))
		})
		st, msg := a.health("refused", rc)
		require.Equal(t, "Degraded", st)
		require.Regexp(t, `^FailedCreateWorkerPod: pods "psa-.*" is forbidden: violates PodSecurity "baseline:latest": .*IPC_LOCK`, msg)
		require.NotContains(t, msg, "\n")
		// KubeRay keeps the RayJob Initializing (until
		// activeDeadlineSeconds, when set, fails it) and copies nothing of
		// the cluster into it before it runs: its check cannot see the
		// refusal, so it stays Progressing and names the cluster whose
		// check reports it.
		job := a.get(rayJobs, "psa")
		st, msg = a.health("refused", job)
		require.Equal(t, "Progressing", st)
		require.Equal(t, "Initializing: waiting for RayCluster "+cluster+" to be ready", msg)
	})
}

func hasCond(conds []any, typ string) bool {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
