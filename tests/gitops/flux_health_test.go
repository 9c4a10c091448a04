package gitops

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// fluxHealth is the shipped Kustomization's healthCheckExprs for kind, as
// kustomize-controller's CEL status evaluator (fluxcd/pkg/runtime/cel).
func fluxHealth(t *testing.T, kind string) *fluxcel.StatusEvaluator {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(t), "gitops", "flux", "kustomization.yaml")
	evs, err := fluxapply.HealthChecks([]byte(testenv.ReadFile(t, path)))
	require.NoError(t, err)
	require.Contains(t, evs, "ray.io/v1/"+kind, "no healthCheckExprs for "+kind)
	return evs["ray.io/v1/"+kind]
}

// evaluate is obj's kstatus status by ev, from obj's JSON as the API
// server serves it.
func evaluate(t *testing.T, ev *fluxcel.StatusEvaluator, obj any) status.Status {
	t.Helper()
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(b))
	r, err := ev.Evaluate(context.Background(), u)
	require.NoError(t, err)
	return r.Status
}

// asFlux is what an Argo CD health status says in Flux's three: a
// suspended run is in progress while Kueue queues it (its LocalQueue's
// label), and current when Git stopped it (suspended without the label:
// runparams.StateFromSpec).
func asFlux(argo string, state runparams.State) status.Status {
	switch argo {
	case "Healthy":
		return status.CurrentStatus
	case "Degraded":
		return status.FailedStatus
	case "Suspended":
		if state == runparams.Stopped {
			return status.CurrentStatus
		}
	}
	return status.InProgressStatus
}

// The shipped healthCheckExprs say what the Argo CD checks say, for the
// RayJob status objects of TestRayJobHealth and TestQueuedByKueue, and a
// run Git stopped (spec.suspend, no Kueue label); a run is stopped for
// them exactly when runparams.StateFromSpec says so.
func TestFluxRayJobHealth(t *testing.T) {
	ev, script := fluxHealth(t, "RayJob"), argohealth.Script(t, "rayjob-health.lua")
	queued := map[string]string{vocab.KueueQueueLabel: "lab-queue"}
	for _, tc := range []struct {
		name    string
		st      rayv1.JobDeploymentStatus
		job     rayv1.JobStatus
		reason  rayv1.JobFailedReason
		labels  map[string]string
		suspend bool
		want    status.Status
	}{
		{"new", rayv1.JobDeploymentStatusNew, rayv1.JobStatusNew, "", nil, false, status.InProgressStatus},
		{"initializing", rayv1.JobDeploymentStatusInitializing, rayv1.JobStatusNew, "", nil, false, status.InProgressStatus},
		{"running", rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, "", nil, false, status.InProgressStatus},
		{"retrying", rayv1.JobDeploymentStatusRetrying, rayv1.JobStatusFailed, "", nil, false, status.InProgressStatus},
		{"waiting", rayv1.JobDeploymentStatusWaiting, rayv1.JobStatusNew, "", nil, false, status.InProgressStatus},
		{"succeeded", rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, "", nil, false, status.CurrentStatus},
		{"complete, stopped", rayv1.JobDeploymentStatusComplete, rayv1.JobStatusStopped, "", nil, false, status.FailedStatus},
		{"failed", rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed, rayv1.AppFailed, nil, false, status.FailedStatus},
		{"deadline", rayv1.JobDeploymentStatusFailed, rayv1.JobStatusNew, rayv1.DeadlineExceeded, nil, false, status.FailedStatus},
		{"validation", rayv1.JobDeploymentStatusValidationFailed, rayv1.JobStatusNew, rayv1.ValidationFailed, nil, false, status.FailedStatus},
		{"stopped in Git", rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, "", nil, true, status.CurrentStatus},
		{"stopping", rayv1.JobDeploymentStatusSuspending, rayv1.JobStatusRunning, "", nil, true, status.InProgressStatus},
		{"queued, new", rayv1.JobDeploymentStatusNew, rayv1.JobStatusNew, "", queued, true, status.InProgressStatus},
		{"queued, suspended", rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, "", queued, true, status.InProgressStatus},
		{"admitted, running", rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, "", queued, false, status.InProgressStatus},
		{"admitted, succeeded", rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, "", queued, false, status.CurrentStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := rayJob(tc.st, tc.job, tc.reason)
			j.Labels, j.Spec.Suspend = tc.labels, tc.suspend
			got := evaluate(t, ev, j)
			assert.Equal(t, tc.want, got)
			argo, _ := argohealth.Check(t, script, j)
			if tc.st != rayv1.JobDeploymentStatusSuspending { // Argo CD: Progressing; KubeRay has not stopped it yet
				assert.Equal(t, asFlux(argo, runparams.StateFromSpec(true, j.Spec.Suspend, j.Labels[vocab.KueueQueueLabel])), got, "Argo CD says %s", argo)
			}
		})
	}
}

// The same for RayCluster, with the status objects of TestRayClusterHealth.
func TestFluxRayClusterHealth(t *testing.T) {
	ev, script := fluxHealth(t, "RayCluster"), argohealth.Script(t, "raycluster-health.lua")
	queued := map[string]string{vocab.KueueQueueLabel: "lab-queue"}
	suspended := cond(rayv1.RayClusterSuspended, metav1.ConditionTrue, "RayClusterSuspended")
	for _, tc := range []struct {
		name    string
		c       *rayv1.RayCluster
		labels  map[string]string
		suspend bool
		want    status.Status
	}{
		{"no state", rayCluster(""), nil, false, status.InProgressStatus},
		{"provisioning", rayCluster("", cond(rayv1.RayClusterProvisioned, metav1.ConditionFalse, "RayClusterPodsProvisioning")), nil, false, status.InProgressStatus},
		{"ready", rayCluster(rayv1.Ready, cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime")), nil, false, status.CurrentStatus},
		{"provisioned", rayCluster("", cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime")), nil, false, status.CurrentStatus},
		{"replica failure", rayCluster(rayv1.Ready, cond(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, "FailedCreateWorkerPod")), nil, false, status.FailedStatus},
		{"failed", rayCluster(rayv1.Failed), nil, false, status.FailedStatus},
		{"stopped in Git", rayCluster(rayv1.Suspended, suspended), nil, true, status.CurrentStatus},
		{"queued", rayCluster(rayv1.Suspended, suspended), queued, true, status.InProgressStatus},
		{"admitted, ready", rayCluster(rayv1.Ready, cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime")), queued, false, status.CurrentStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Labels = tc.labels
			if tc.suspend {
				tc.c.Spec.Suspend = &tc.suspend
			}
			got := evaluate(t, ev, tc.c)
			assert.Equal(t, tc.want, got)
			argo, _ := argohealth.Check(t, script, tc.c)
			assert.Equal(t, asFlux(argo, runparams.StateFromSpec(true, tc.suspend, tc.labels[vocab.KueueQueueLabel])), got, "Argo CD says %s", argo)
		})
	}
}
