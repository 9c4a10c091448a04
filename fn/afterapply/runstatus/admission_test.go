package runstatus

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The states that hold a run back wait; describeAdmission is one line.
func TestAdmissionWaits(t *testing.T) {
	for _, tc := range []struct {
		state string
		waits bool
	}{
		{AdmissionQueued, true}, {AdmissionReserved, true}, {AdmissionAdmitted, false}, {AdmissionEvicted, true},
		{AdmissionPreempted, true}, {AdmissionFinished, false}, {AdmissionScheduled, false}, {AdmissionUnschedulable, true},
	} {
		t.Run(tc.state, func(t *testing.T) {
			_, waits := waiting([]Admission{{Object: "RayJob/j", Kind: "Workload", State: tc.state}})
			assert.Equal(t, tc.waits, waits)
		})
	}
	assert.Equal(t, "RayJob/j Workload queued (queue lab): Pending: no quota",
		describeAdmission(Admission{Object: "RayJob/j", Kind: "Workload", State: AdmissionQueued, Queue: "lab", Reason: "Pending", Message: "no quota"}))
	assert.Equal(t, "RayJob/j PodGroup scheduled", describeAdmission(Admission{Object: "RayJob/j", Kind: "PodGroup", State: AdmissionScheduled}))
}

// Only a UID a server could have made goes into a label selector.
func TestValidUID(t *testing.T) {
	for uid, want := range map[string]bool{
		"0b7c6f1e-4a2d-4d8e-9c1a-3f5e7a9b1c2d": true,
		"a) or (x":                             false,
		"a,b":                                  false,
		string(make([]byte, 64)):               false,
	} {
		assert.Equal(t, want, validUID(uid), "%q", uid)
	}
}

// When RBAC refuses both schedulers' lists, their Problem lines come in
// API group order (Kueue's Workloads, then KAI's PodGroups), whatever the
// registry's order.
func TestAdmissionRefusalsInOrder(t *testing.T) {
	c := conn(t, fakeCluster{
		jobsPath: list("ray.io/v1", "RayJob", job("j", "u-1", "r", "", "", "Running")),
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads":     status(403, "Forbidden"),
		"/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups": status(403, "Forbidden"),
	})
	r, err := Collect(context.Background(), c, "ml", "r", time.Now())
	require.NoError(t, err)
	var got []string
	for _, p := range r.Problems {
		if p.Reason == "Forbidden" {
			got = append(got, p.Object)
		}
	}
	assert.Equal(t, []string{"workloads", "podgroups"}, got)
}
