package multicluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// status on the manager follows a dispatched run: its Workload is
// admitted on the worker cluster MultiKueue chose, and the summary says
// the Pods are there (the manager's RayJob has none); status on that
// worker shows them.
func TestStatusFollowsTheRun(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-status"
	r := render(t, "mk-status", ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-status", []int{16, 16}, waitFor))
	deliver(t, f, ns, r)
	w := f.Workers[dispatched(t, f, ns, r.job.GetName())]
	run := r.job.GetLabels()[vocab.InstanceLabel]
	require.NotEmpty(t, run)

	var st runstatus.Report
	require.NoError(t, operator.Wait(ctx, waitFor, "status on the manager to name the worker", func(ctx context.Context) (bool, string, error) {
		var err error
		st, err = runstatus.Collect(ctx, connTo(t, f.Manager.Env, ns), ns, run, time.Now())
		return len(st.Admissions) == 1 && st.Admissions[0].Worker != "", st.Summary, err
	}))
	t.Logf("status on the manager:\n%s", st.Text())
	a := st.Admissions[0]
	assert.Equal(t, "Workload", a.Kind)
	assert.Equal(t, w.Name, a.Worker)
	assert.Equal(t, runstatus.AdmissionAdmitted, a.State, "%+v", a)
	assert.Empty(t, st.Pods, "no Pods on the manager")
	assert.Contains(t, st.Summary, "worker cluster "+w.Name+": its Pods are there")
	assert.Contains(t, st.Text(), "on worker cluster "+w.Name)

	require.NoError(t, operator.Wait(ctx, waitFor, "status on "+w.Name+" to show the Pods", func(ctx context.Context) (bool, string, error) {
		var err error
		st, err = runstatus.Collect(ctx, connTo(t, w.Env, ns), ns, run, time.Now())
		return len(st.Pods) > 0, st.Summary, err
	}))
	assert.NotContains(t, st.Summary, "dispatched by MultiKueue", "the worker's own status reads its Pods")
}

func connTo(t *testing.T, env *operator.Env, ns string) *kube.Conn {
	t.Helper()
	c, err := kube.FromConfig(env.Server.Config, ns, kube.Options{})
	require.NoError(t, err)
	return c
}
