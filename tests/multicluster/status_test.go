package multicluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// status on the manager follows a dispatched run: its Workload is
// admitted on the worker cluster MultiKueue chose, and the summary says
// the Pods are there (the manager's RayJob has none); status on that
// worker shows them, and so does status on the manager given the workers.
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
	require.NoError(t, operator.Wait(ctx, waitFor, "status on the manager to name the worker, admitted", func(ctx context.Context) (bool, string, error) {
		var err error
		st, err = runstatus.Collect(ctx, connTo(t, f.Manager.Env, ns), ns, run, time.Now())
		// MultiKueue names the worker as it reserves there; admitted follows.
		return len(st.Admissions) == 1 && st.Admissions[0].Worker != "" && st.Admissions[0].State == runstatus.AdmissionAdmitted, st.Summary, err
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
	followedFromTheManager(t, f, w, ns, run, st.Pods[0].Name)
}

// followedFromTheManager: status on the manager, given the workers as
// contexts of the user's kubeconfig, reports the worker's RayJob, Pods and
// why one waits, under the worker's name, the worker's verdict deciding;
// without that worker's context it says so and the manager's report stands.
func followedFromTheManager(t *testing.T, f *multicluster.Fleet, w multicluster.Cluster, ns, run, podName string) {
	t.Helper()
	ctx := context.Background()
	// No scheduler runs here: the test writes what kube-scheduler would
	// on a fleet without room.
	var pod corev1.Pod
	require.NoError(t, w.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, &pod))
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."})
	require.NoError(t, w.Env.Client.Status().Update(ctx, &pod))
	kc, err := f.Kubeconfig(t.TempDir())
	require.NoError(t, err)
	args := []string{"status", run, "-n", ns, "--kubeconfig", kc, "--context", f.Manager.Name}
	var workers []string
	for _, o := range f.Workers {
		workers = append(workers, "--worker", o.Name+"="+o.Name)
	}

	code, out, errs := clirun.Run(append(args, workers...)...)
	t.Logf("status on the manager, following the run:\n%s", out)
	assert.Equal(t, runstatus.ExitProblem, code, "the worker's verdict decides: stuck\nstdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{
		"RayJob/" + run + " runs on worker cluster " + w.Name + ": ",
		"On worker cluster " + w.Name + " (MultiKueue dispatched the run there):\n  run " + run + " in namespace " + ns + ": stuck",
		"\n  RayJob " + run + ": ", "\n  Pods: ", podName + " (", "Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
		"\n  Problems:\n    Pod/" + podName + " Pending: Unschedulable",
	} {
		assert.Contains(t, out, want)
	}

	code, out, errs = clirun.Run(append(args, "-o", "json")...)
	assert.Equal(t, 0, code, "without the worker the manager's verdict stands\nstdout:\n%s\nstderr:\n%s", out, errs)
	var rep runstatus.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Worker)
	assert.Equal(t, w.Name, rep.Worker.Cluster)
	assert.Nil(t, rep.Worker.Report)
	assert.Equal(t, "not read: no --worker "+w.Name+"=CONTEXT was given", rep.Worker.Note)
}

func connTo(t *testing.T, env *operator.Env, ns string) *kube.Conn {
	t.Helper()
	c, err := kube.FromConfig(env.Server.Config, ns, kube.Options{})
	require.NoError(t, err)
	return c
}
