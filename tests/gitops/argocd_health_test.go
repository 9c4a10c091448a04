// Package gitops tests the shipped Argo CD health checks (gitops/argocd/*.lua)
// in gopher-lua, the Lua interpreter Argo CD itself runs them in
// (internal/argohealth), on status objects built from KubeRay v1.5.0's own
// status types and constants (what its reconcilers write), converted to the
// JSON Argo CD hands the script. tests/afterapply runs them on the objects
// KubeRay's reconcilers wrote into the real API server (TestArgoCDHealth).
package gitops

import (
	"fmt"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
)

func rayJob(st rayv1.JobDeploymentStatus, job rayv1.JobStatus, reason rayv1.JobFailedReason) *rayv1.RayJob {
	j := &rayv1.RayJob{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}}
	j.Status.JobDeploymentStatus, j.Status.JobStatus, j.Status.Reason = st, job, reason
	return j
}

func TestRayJobHealth(t *testing.T) {
	script := argohealth.Script(t, "rayjob-health.lua")
	for _, tc := range []struct {
		job        *rayv1.RayJob
		want, text string
	}{
		{rayJob(rayv1.JobDeploymentStatusNew, rayv1.JobStatusNew, ""), "Progressing", "waiting for KubeRay"},
		{rayJob(rayv1.JobDeploymentStatusInitializing, rayv1.JobStatusNew, ""), "Progressing", "Initializing"},
		{rayJob(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, ""), "Progressing", "Running, job RUNNING"},
		{rayJob(rayv1.JobDeploymentStatusRetrying, rayv1.JobStatusFailed, ""), "Progressing", "Retrying"},
		{rayJob(rayv1.JobDeploymentStatusWaiting, rayv1.JobStatusNew, ""), "Progressing", "Waiting"},
		{rayJob(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, ""), "Healthy", "Complete, job SUCCEEDED"},
		{rayJob(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusStopped, ""), "Degraded", "job STOPPED"},
		{rayJob(rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed, rayv1.AppFailed), "Degraded", "Failed, job FAILED: AppFailed"},
		{rayJob(rayv1.JobDeploymentStatusFailed, rayv1.JobStatusNew, rayv1.DeadlineExceeded), "Degraded", "DeadlineExceeded"},
		{rayJob(rayv1.JobDeploymentStatusValidationFailed, rayv1.JobStatusNew, rayv1.ValidationFailed), "Degraded", "ValidationFailed"},
		{rayJob(rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, ""), "Suspended", "Suspended"},
		{rayJob(rayv1.JobDeploymentStatusSuspending, rayv1.JobStatusNew, ""), "Progressing", "Suspending"},
	} {
		st, msg := argohealth.Check(t, script, tc.job)
		assert.Equal(t, tc.want, st, "%s/%s", tc.job.Status.JobDeploymentStatus, tc.job.Status.JobStatus)
		assert.Contains(t, msg, tc.text)
	}
	// Initializing names the RayCluster KubeRay created, whose own check
	// tells why it is not ready.
	init := rayJob(rayv1.JobDeploymentStatusInitializing, "", "")
	init.Status.RayClusterName = "r-x2k9q"
	st, msg := argohealth.Check(t, script, init)
	assert.Equal(t, "Progressing", st)
	assert.Equal(t, "Initializing: waiting for RayCluster r-x2k9q to be ready", msg)
	// Without any status (just created).
	bare := rayJob("", "", "")
	st, _ = argohealth.Check(t, script, map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": map[string]any{"name": bare.Name}})
	assert.Equal(t, "Progressing", st)
}

func rayCluster(state rayv1.ClusterState, conds ...metav1.Condition) *rayv1.RayCluster {
	c := &rayv1.RayCluster{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"}, ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "n"}}
	c.Status.State, c.Status.Conditions = state, conds //nolint:staticcheck // State is deprecated in KubeRay but still written; the script reads both
	return c
}

func cond(t rayv1.RayClusterConditionType, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: reason, Message: "m", LastTransitionTime: metav1.Now()}
}

func TestRayClusterHealth(t *testing.T) {
	script := argohealth.Script(t, "raycluster-health.lua")
	for _, tc := range []struct {
		c    *rayv1.RayCluster
		want string
	}{
		{rayCluster(""), "Progressing"},
		{rayCluster("", cond(rayv1.RayClusterProvisioned, metav1.ConditionFalse, "RayClusterPodsProvisioning"), cond(rayv1.HeadPodReady, metav1.ConditionFalse, "HeadPodNotFound")), "Progressing"},
		{rayCluster(rayv1.Ready, cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime"), cond(rayv1.HeadPodReady, metav1.ConditionTrue, "HeadPodRunningAndReady")), "Healthy"},
		{rayCluster("", cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime")), "Healthy"},
		{rayCluster(rayv1.Ready, cond(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, "FailedCreateWorkerPod")), "Degraded"},
		{rayCluster(rayv1.Failed), "Degraded"},
		{rayCluster(rayv1.Suspended, cond(rayv1.RayClusterSuspended, metav1.ConditionTrue, "RayClusterSuspended")), "Suspended"},
	} {
		st, _ := argohealth.Check(t, script, tc.c)
		assert.Equal(t, tc.want, st, "%+v", tc.c.Status)
	}
	// KubeRay's ReplicaFailure message is its reconcile error,
	// errors.Join(reason, refusal): the check reports it on one line with
	// the reason once (as tests/afterapply's Pod Security refusal shows).
	refused := cond(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, "FailedCreateWorkerPod")
	refused.Message = "FailedCreateWorkerPod\npods \"c-w-x\" is forbidden: violates PodSecurity \"baseline:latest\""
	st, msg := argohealth.Check(t, script, rayCluster("", refused))
	assert.Equal(t, "Degraded", st)
	assert.Equal(t, `FailedCreateWorkerPod: pods "c-w-x" is forbidden: violates PodSecurity "baseline:latest"`, msg)
	// Another message gets the reason in front.
	refused.Message = "quota exceeded"
	_, msg = argohealth.Check(t, script, rayCluster("", refused))
	assert.Equal(t, "FailedCreateWorkerPod: quota exceeded", msg)
}

// A run Kueue admits and has not admitted yet (suspended, with its
// LocalQueue's label) is reported as queued in that LocalQueue, before
// KubeRay's first status as after it; a suspended run without the label is
// plainly suspended.
func TestQueuedByKueue(t *testing.T) {
	const want = "queued by Kueue in LocalQueue lab-queue: waiting for quota (Kueue unsuspends it when admitted; never edit spec.suspend)"
	labelled := map[string]string{vocab.KueueQueueLabel: "lab-queue"}

	job := argohealth.Script(t, "rayjob-health.lua")
	fresh := rayJob("", "", "")
	fresh.Labels, fresh.Spec.Suspend = labelled, true
	jobs := []*rayv1.RayJob{fresh}
	// KubeRay's way from New to Suspended for a RayJob created suspended.
	for _, s := range []rayv1.JobDeploymentStatus{rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusInitializing, rayv1.JobDeploymentStatusSuspending, rayv1.JobDeploymentStatusSuspended} {
		j := rayJob(s, rayv1.JobStatusNew, "")
		j.Labels, j.Spec.Suspend = labelled, true
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		st, msg := argohealth.Check(t, job, j)
		assert.Equal(t, "Suspended", st, "%+v", j.Status)
		assert.Equal(t, want, msg)
	}
	st, msg := argohealth.Check(t, job, rayJob(rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, ""))
	assert.Equal(t, "Suspended", st)
	assert.NotContains(t, msg, "Kueue")

	cluster := argohealth.Script(t, "raycluster-health.lua")
	c := rayCluster(rayv1.Suspended, cond(rayv1.RayClusterSuspended, metav1.ConditionTrue, "RayClusterSuspended"))
	c.Labels = labelled
	st, msg = argohealth.Check(t, cluster, c)
	assert.Equal(t, "Suspended", st)
	assert.Equal(t, want, msg)
	freshCluster := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": "c", "labels": map[string]any{vocab.KueueQueueLabel: "lab-queue"}},
		"spec":     map[string]any{"suspend": true}}
	st, msg = argohealth.Check(t, cluster, freshCluster)
	assert.Equal(t, "Suspended", st)
	assert.Equal(t, want, msg)
}

// A run Git declares stopped (manifest.Stop suspends and annotates its
// objects, and leaves Kueue's out) is Suspended once KubeRay has deleted
// its cluster or Pods, Progressing while it deletes them: also a RayJob
// re-created suspended by a sync (no status yet). A stopped run that had
// ended keeps its end state. The state is the spec's
// (runparams.StateFromSpec), never the annotation's: an annotated object
// that runs unsuspended is not "stopped", nor one Kueue's label queues.
func TestStoppedRun(t *testing.T) {
	stopped := map[string]string{vocab.StateAnnotation: string(runparams.Stopped)}
	job := argohealth.Script(t, "rayjob-health.lua")
	for _, tc := range []struct {
		st        rayv1.JobDeploymentStatus
		jobStatus rayv1.JobStatus
		want      string
		msg       string
	}{
		{"", "", "Suspended", "stopped (state: stopped in Git): no cluster runs"},
		{rayv1.JobDeploymentStatusInitializing, rayv1.JobStatusNew, "Suspended", "stopped (state: stopped in Git)"},
		{rayv1.JobDeploymentStatusSuspending, rayv1.JobStatusRunning, "Progressing", "stopping (state: stopped in Git): KubeRay is deleting the run's cluster"},
		{rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, "Suspended", "stopped (state: stopped in Git)"},
		{rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, "Healthy", "Complete, job SUCCEEDED"},
		{rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed, "Degraded", "Failed"},
	} {
		j := rayJob(tc.st, tc.jobStatus, "")
		j.Annotations, j.Spec.Suspend = stopped, true
		st, msg := argohealth.Check(t, job, j)
		assert.Equal(t, tc.want, st, "%s", tc.st)
		assert.Contains(t, msg, tc.msg, "%s", tc.st)
	}
	for _, tc := range []struct {
		name     string
		suspend  bool
		labels   map[string]string
		want     string
		contains string
	}{
		{"annotated, running unsuspended", false, nil, "Progressing", "Running, job RUNNING"},
		{"annotated, suspended, Kueue's label", true, map[string]string{vocab.KueueQueueLabel: "lab-queue"}, "Suspended", "queued by Kueue in LocalQueue lab-queue"},
	} {
		j := rayJob(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, "")
		j.Annotations, j.Labels, j.Spec.Suspend = stopped, tc.labels, tc.suspend
		st, msg := argohealth.Check(t, job, j)
		assert.Equal(t, tc.want, st, tc.name)
		assert.Contains(t, msg, tc.contains, tc.name)
		assert.NotContains(t, msg, "stopped", tc.name)
	}

	cluster := argohealth.Script(t, "raycluster-health.lua")
	suspending := rayCluster("", cond(rayv1.RayClusterSuspending, metav1.ConditionTrue, "RayClusterSuspending"))
	suspended := rayCluster(rayv1.Suspended, cond(rayv1.RayClusterSuspended, metav1.ConditionTrue, "RayClusterSuspended"))
	fresh := rayCluster("")
	fresh.Status = rayv1.RayClusterStatus{}
	ready := rayCluster(rayv1.Ready, cond(rayv1.RayClusterProvisioned, metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime"))
	for _, tc := range []struct {
		name      string
		c         *rayv1.RayCluster
		suspend   bool
		want, msg string
	}{
		{"suspending", suspending, true, "Progressing", "stopping (state: stopped in Git): KubeRay is deleting the cluster's Pods"},
		{"suspended", suspended, true, "Suspended", "stopped (state: stopped in Git): no Pods run"},
		{"no status yet", fresh, true, "Suspended", "stopped (state: stopped in Git): no Pods run"},
		{"annotated, running unsuspended", ready, false, "Healthy", "ready"},
	} {
		tc.c.Annotations, tc.c.Spec.Suspend = stopped, &tc.suspend
		st, msg := argohealth.Check(t, cluster, tc.c)
		assert.Equal(t, tc.want, st, tc.name)
		assert.Contains(t, msg, tc.msg, tc.name)
	}
}

// Argo CD takes one script per kind, so the two checks each carry the
// helpers they share (typed reads, text, message, the run's state): the
// block is the same in both, and holds argohealth's bounds.
func TestHealthChecksShareOneBlock(t *testing.T) {
	block := func(file string) string {
		s := argohealth.Script(t, file)
		start, end := strings.Index(s, "-- >>> shared"), strings.Index(s, "-- <<< shared")
		require.True(t, start >= 0 && end > start, "%s: no shared block", file)
		return s[start:end]
	}
	assert.Equal(t, block("rayjob-health.lua"), block("raycluster-health.lua"))
	assert.Contains(t, block("rayjob-health.lua"), fmt.Sprintf("local LIST_MAX, CAP, CUT = %d, %d, ", argohealth.ListMax, argohealth.MessageCap))
}
