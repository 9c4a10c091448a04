package runstatus

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An object with a deletionTimestamp is being deleted, whatever its status
// still says; the finalizers it waits on are named (a finalizer whose
// controller is gone holds it forever).
func TestDeletingObjects(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gone := metav1.NewTime(now)
	meta := metav1.ObjectMeta{Name: "j", DeletionTimestamp: &gone, Finalizers: []string{"ray.io/rayjob-finalizer"}}
	j := rayJob(&rayv1.RayJob{ObjectMeta: meta, Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}}, false, now)
	assert.True(t, j.Deleting)
	assert.Equal(t, []string{"ray.io/rayjob-finalizer"}, j.Finalizers)
	c := rayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", DeletionTimestamp: &gone}, Status: rayv1.RayClusterStatus{State: rayv1.Ready}}) //nolint:staticcheck // State: as collect reads it
	assert.True(t, c.Deleting)
	live := rayJob(&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "k"}}, false, now)
	assert.False(t, live.Deleting)

	r := Report{Run: "r", Namespace: "ns", RayJobs: []RayJob{j}, RayClusters: []RayCluster{c}}
	r.Verdict, r.Summary = judge(r)
	out := r.Text()
	assert.Contains(t, out, "run r in namespace ns: deleting\n")
	assert.Contains(t, out, "RayJob j: Running, being deleted (finalizers ray.io/rayjob-finalizer)\n")
	assert.Contains(t, out, "RayCluster c: state ready, workers ready 0/0, being deleted\n")
}
