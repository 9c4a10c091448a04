package operator

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The CLI never links this package nor KubeRay's controllers (their init
// and client-go's scheme would cost every process; docs/performance.md).
func TestCLIDoesNotLinkTheOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	root := testenv.RepoRoot(t)
	cmd := exec.Command("go", "list", "-deps", "./fn/cmd/nrl-k8s")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli", "go list answered for the CLI")
	for _, pkg := range []string{
		"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator",
		"github.com/ray-project/kuberay/ray-operator/controllers/ray",
		"sigs.k8s.io/controller-runtime",
	} {
		require.NotContains(t, deps, pkg)
	}
}

// The stand-in dashboard answers as Ray's does for an HTTPMode RayJob: not
// found (so KubeRay submits it), then running; it records which cluster
// got which job.
func TestDashboard(t *testing.T) {
	ctx := context.Background()
	d := NewDashboard()
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	c, err := d.GetDashboardClient(nil)(rc, "http://c-head-svc.ns.svc.cluster.local:8265")
	require.NoError(t, err)
	_, err = c.GetJobInfo(ctx, "j-1")
	require.True(t, apierrors.IsBadRequest(err), "an unknown job is the dashboard's 404, a BadRequest to KubeRay: %v", err)
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: rayv1.RayJobSpec{Entrypoint: "python x.py"}}
	rj.Status.JobId = "j-1"
	id, err := c.SubmitJob(ctx, rj)
	require.NoError(t, err)
	require.Equal(t, "j-1", id)
	info, err := c.GetJobInfo(ctx, "j-1")
	require.NoError(t, err)
	require.Equal(t, rayv1.JobStatusRunning, info.JobStatus)
	require.Equal(t, []Submission{{Namespace: "ns", Cluster: "c", RayJob: "job", JobID: "j-1", Entrypoint: "python x.py"}}, d.Submissions("ns"))
	require.Empty(t, d.Submissions("other"))

	other, err := d.GetDashboardClient(nil)(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}, "")
	require.NoError(t, err)
	_, err = other.GetJobInfo(ctx, "j-1")
	require.True(t, apierrors.IsBadRequest(err), "a job submitted to cluster c is unknown to cluster d")
}

func TestWait(t *testing.T) {
	ctx := context.Background()
	n := 0
	require.NoError(t, Wait(ctx, time.Second, "three polls", func(context.Context) (bool, string, error) {
		n++
		return n == 3, "", nil
	}))
	require.Equal(t, 3, n)

	err := Wait(ctx, 250*time.Millisecond, "Godot", func(context.Context) (bool, string, error) {
		return false, "2 worker Pods, want 4", nil
	})
	require.EqualError(t, err, "timed out after 250ms waiting for Godot; last seen: 2 worker Pods, want 4")

	boom := errors.New("boom")
	err = Wait(ctx, time.Second, "x", func(context.Context) (bool, string, error) { return false, "", boom })
	require.ErrorIs(t, err, boom)
}

func TestRefusals(t *testing.T) {
	ev := func(reason, kind, name, msg string) corev1.Event {
		return corev1.Event{Reason: reason, Message: msg, InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}}
	}
	events := []corev1.Event{
		ev("CreatedHeadPod", "RayCluster", "c", "Created head Pod ns/c-head"),
		ev("FailedToCreateWorkerPod", "RayCluster", "c", `Failed to create worker Pod ns/, pods "c-w-x" is forbidden: violates PodSecurity "baseline:latest"`),
	}
	got := Refusals(events)
	require.Len(t, got, 1)
	err := &RefusedError{Namespace: "ns", Cluster: "c", Events: got}
	require.Equal(t, "KubeRay could not create the objects of RayCluster ns/c:\n"+
		`FailedToCreateWorkerPod RayCluster/c: Failed to create worker Pod ns/, pods "c-w-x" is forbidden: violates PodSecurity "baseline:latest"`, err.Error())
	r, ok := AsRefused(errors.Join(errors.New("x"), err))
	require.True(t, ok)
	require.Same(t, err, r)
}
