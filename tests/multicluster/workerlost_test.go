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

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// A worker that stops answering the manager (the connection to its API
// server is cut, as if the server were gone): Kueue marks its
// MultiKueueCluster inactive and, once workerLostTimeout (15 s in this
// tier's Kueue Configuration; 15 minutes by default) has passed since the
// run was admitted, puts the run back in the queue ("Reserving remote
// lost") and dispatches it to the other worker. The lost worker keeps its
// copy: nothing can reach it to delete it. The test reconnects the worker
// when it ends, so the fleet stays whole.
func TestMultiKueueWorkerLost(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-lost"
	r := render(t, "mk-lost", ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-lost", []int{16, 16}, waitFor))
	deliver(t, f, ns, r)
	at := dispatched(t, f, ns, r.job.GetName())
	lost, other := f.Workers[at], f.Workers[1-at]
	var mine rayv1.RayJob
	require.NoError(t, f.Manager.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.job.GetName()}, &mine))
	require.Equal(t, lost.Name, clusterOf(t, f, ns, &mine))

	begin := time.Now()
	restore := f.Lose(at)
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

	// The Workload names the new worker once Kueue has evicted it from the
	// lost one and admitted it again; MultiKueue may copy the RayJob there
	// a little before (while the check is Retry), so the name is the proof.
	require.NoError(t, operator.Wait(ctx, 2*waitFor, "the manager's Workload to name "+other.Name, func(ctx context.Context) (bool, string, error) {
		name, err := workloadCluster(ctx, f, ns, &mine)
		return name == other.Name, "status.clusterName " + name + "; " + workloadStatus(ctx, f, ns), err
	}), "the manager's Kueue log:\n%s", tail(f.Manager.Kueue.Log()))
	t.Logf("re-dispatched to %s %s after %s stopped answering", other.Name, time.Since(begin).Round(time.Millisecond), lost.Name)
	require.NoError(t, operator.Wait(ctx, waitFor, "the run's RayJob on "+other.Name, func(ctx context.Context) (bool, string, error) {
		err := other.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.job.GetName()}, &rayv1.RayJob{})
		return err == nil, "not on " + other.Name, client.IgnoreNotFound(err)
	}))
	assert.NoError(t, lost.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.job.GetName()}, &rayv1.RayJob{}),
		"the lost worker still holds its copy: nothing reached it to stop it")
}

// workloadStatus is the manager's Workloads' status in ns, for a failure
// message.
func workloadStatus(ctx context.Context, f *multicluster.Fleet, ns string) string {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(vocab.KueueAPIVersion)
	l.SetKind("WorkloadList")
	if err := f.Manager.Env.Server.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, w := range l.Items {
		st, _ := json.Marshal(w.Object["status"])
		fmt.Fprintf(&b, "%s: %s\n", w.GetName(), st)
	}
	return b.String()
}
