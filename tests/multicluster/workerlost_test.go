package multicluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// A worker that stops answering the manager (the connection to its API
// server is cut, as if the server were gone) after the run started there,
// while the other worker is full. Kueue marks its MultiKueueCluster
// inactive and, workerLostTimeout (15 s in this tier's Kueue
// Configuration; 15 minutes by default) after the run was admitted, evicts
// the run's Workload ("Reserving remote lost"). Kueue v0.17.0 then keeps
// the quota until the manager's RayJob reads inactive, and that RayJob's
// status is MultiKueue's copy of the lost worker's: with no other worker
// to admit the run's copy (whose suspended status MultiKueue would mirror),
// the run is requeued nowhere (kubernetes-sigs/kueue#15380; where another
// worker has room it may move on, or not: a race the tier once lost in
// CI). status says so, and the way out it names works: the RayJob deleted
// on the manager and recreated from Git is dispatched to the other worker
// once it has room. The lost worker keeps its copy: nothing can reach it.
// The test reconnects the worker when it ends, so the fleet stays whole.
func TestMultiKueueWorkerLost(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-lost"
	r := render(t, "mk-lost", ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-lost", []int{16, 0}, waitFor))
	deliver(t, f, ns, r)
	require.Equal(t, 0, dispatched(t, f, ns, r.job.GetName()), "the only worker with room")
	lost, other := f.Workers[0], f.Workers[1]
	key := client.ObjectKey{Namespace: ns, Name: r.job.GetName()}
	var mine rayv1.RayJob
	// As for any run that has started: the manager's RayJob reads the
	// status MultiKueue copied from the worker, where KubeRay runs it.
	require.NoError(t, operator.Wait(ctx, waitFor, "the manager's RayJob to read the worker's status", func(ctx context.Context) (bool, string, error) {
		err := f.Manager.Env.Client.Get(ctx, key, &mine)
		s := mine.Status.JobDeploymentStatus
		return err == nil && (s == rayv1.JobDeploymentStatusInitializing || s == rayv1.JobDeploymentStatusRunning), "jobDeploymentStatus " + string(s), err
	}))
	require.Equal(t, lost.Name, clusterOf(t, f, ns, &mine))

	begin := time.Now()
	restore := f.Lose(0)
	t.Cleanup(func() {
		assert.NoError(t, restore(context.Background(), waitFor), "reconnect %s", lost.Name)
	})
	var why string
	require.NoError(t, operator.Wait(ctx, waitFor, "MultiKueueCluster "+lost.Name+" inactive", func(ctx context.Context) (bool, string, error) {
		active, msg, err := f.ClusterActive(ctx, lost.Name)
		why = msg
		return !active && err == nil, msg, err
	}))
	t.Logf("%s inactive after %s: %s", lost.Name, time.Since(begin).Round(time.Millisecond), why)
	assert.Contains(t, why, "connection refused", "the manager says why the worker is inactive")

	require.NoError(t, operator.Wait(ctx, waitFor, "the manager's Workload evicted, its quota kept", func(ctx context.Context) (bool, string, error) {
		conds, err := workloadConditions(ctx, f, ns)
		return conds["Evicted"] == "True" && conds["QuotaReserved"] == "True", workloadStatus(ctx, f, ns), err
	}), "the manager's Kueue log on %s:\n%s", ns, kueueLog(f, ns))
	t.Logf("evicted, its quota kept, %s after %s stopped answering", time.Since(begin).Round(time.Millisecond), lost.Name)

	run := r.job.GetLabels()[vocab.InstanceLabel]
	var st runstatus.Report
	require.NoError(t, operator.Wait(ctx, waitFor, "status on the manager to call the run stuck", func(ctx context.Context) (bool, string, error) {
		var err error
		st, err = runstatus.Collect(ctx, connTo(t, f.Manager.Env, ns), ns, run, time.Now())
		return st.Verdict == runstatus.Stuck, st.Summary, err
	}), workloadStatus(ctx, f, ns))
	for _, want := range []string{"keeps its quota", "MultiKueue's copy", "kubernetes-sigs/kueue#15380", "deleting this RayJob on the manager"} {
		assert.Contains(t, st.Summary, want)
	}
	conds, err := workloadConditions(ctx, f, ns)
	require.NoError(t, err)
	assert.Equal(t, "True", conds["QuotaReserved"], "the quota is still held: %s", workloadStatus(ctx, f, ns))
	kc, err := f.Kubeconfig(t.TempDir())
	require.NoError(t, err)
	code, out, errs := clirun.Run("status", run, "-n", ns, "--kubeconfig", kc, "--context", f.Manager.Name)
	assert.Equal(t, runstatus.ExitProblem, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	assert.Contains(t, out, ": stuck")

	// The way out status names: the RayJob deleted on the manager, its
	// Workload with it (as the garbage collector would: this tier runs
	// none), recreated from Git; then room on the other worker.
	require.NoError(t, f.Manager.Env.Client.Delete(ctx, &mine))
	require.NoError(t, deleteWorkloads(ctx, f, ns))
	require.NoError(t, f.Manager.Env.Apply(ctx, ns, []*unstructured.Unstructured{r.job}))
	require.NoError(t, setGPUQuota(ctx, other.Env, "lab-lost", "16"))
	var again rayv1.RayJob
	require.NoError(t, f.Manager.Env.Client.Get(ctx, key, &again))
	require.NotEqual(t, mine.UID, again.UID, "a new RayJob")
	require.NoError(t, operator.Wait(ctx, waitFor, "the new Workload to name "+other.Name, func(ctx context.Context) (bool, string, error) {
		name, err := workloadCluster(ctx, f, ns, &again)
		return name == other.Name, "status.clusterName " + name + "; " + workloadStatus(ctx, f, ns), err
	}), "the manager's Kueue log on %s:\n%s", ns, kueueLog(f, ns))
	t.Logf("recreated, dispatched to %s %s after %s stopped answering", other.Name, time.Since(begin).Round(time.Millisecond), lost.Name)
	require.NoError(t, operator.Wait(ctx, waitFor, "the run's RayJob on "+other.Name, func(ctx context.Context) (bool, string, error) {
		err := other.Env.Client.Get(ctx, key, &rayv1.RayJob{})
		return err == nil, "not on " + other.Name, client.IgnoreNotFound(err)
	}))
	assert.NoError(t, lost.Env.Client.Get(ctx, key, &rayv1.RayJob{}),
		"the lost worker still holds its copy: nothing reached it to stop it")
}

// setGPUQuota sets the nvidia.com/gpu nominal quota of ClusterQueue cq (as
// kueue.Queue makes it) on env.
func setGPUQuota(ctx context.Context, env *operator.Env, cq, gpus string) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(vocab.KueueAPIVersion)
	u.SetKind("ClusterQueue")
	if err := env.Server.Client.Get(ctx, client.ObjectKey{Name: cq}, u); err != nil {
		return err
	}
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceGroups")
	for _, g := range groups {
		for _, fl := range g.(map[string]any)["flavors"].([]any) {
			for _, res := range fl.(map[string]any)["resources"].([]any) {
				if m := res.(map[string]any); m["name"] == "nvidia.com/gpu" {
					m["nominalQuota"] = gpus
				}
			}
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, groups, "spec", "resourceGroups"); err != nil {
		return err
	}
	return env.Server.Client.Update(ctx, u)
}

// workloads lists the manager's Workloads in ns.
func workloads(ctx context.Context, f *multicluster.Fleet, ns string) (*unstructured.UnstructuredList, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(vocab.KueueAPIVersion)
	l.SetKind("WorkloadList")
	return l, f.Manager.Env.Server.Client.List(ctx, l, client.InNamespace(ns))
}

// workloadConditions are the status of each condition of the one Workload
// in ns on the manager, by type (none while there is not exactly one).
func workloadConditions(ctx context.Context, f *multicluster.Fleet, ns string) (map[string]string, error) {
	l, err := workloads(ctx, f, ns)
	if err != nil || len(l.Items) != 1 {
		return nil, err
	}
	out := map[string]string{}
	conds, _, _ := unstructured.NestedSlice(l.Items[0].Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		out[typ], _ = m["status"].(string)
	}
	return out, nil
}

// deleteWorkloads deletes the manager's Workloads in ns and waits until
// they are gone (Kueue removes its finalizer once their job is gone).
func deleteWorkloads(ctx context.Context, f *multicluster.Fleet, ns string) error {
	l, err := workloads(ctx, f, ns)
	if err != nil {
		return err
	}
	for i := range l.Items {
		if err := client.IgnoreNotFound(f.Manager.Env.Server.Client.Delete(ctx, &l.Items[i])); err != nil {
			return err
		}
	}
	return operator.Wait(ctx, waitFor, "the old Workloads gone", func(ctx context.Context) (bool, string, error) {
		l, err := workloads(ctx, f, ns)
		if err != nil {
			return false, "", err
		}
		return len(l.Items) == 0, fmt.Sprintf("%d left", len(l.Items)), nil
	})
}

// workloadStatus is the manager's Workloads' status in ns, for a failure
// message.
func workloadStatus(ctx context.Context, f *multicluster.Fleet, ns string) string {
	l, err := workloads(ctx, f, ns)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, w := range l.Items {
		st, _ := json.Marshal(w.Object["status"])
		fmt.Fprintf(&b, "%s: %s\n", w.GetName(), st)
	}
	return b.String()
}
