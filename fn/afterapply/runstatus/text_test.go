package runstatus

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The text report: the verdict first, one line per object, cluster text
// escaped so it cannot forge a line; json is the same report as data.
func TestText(t *testing.T) {
	r := Report{Run: "r", Namespace: "ns", Verdict: Stuck, Summary: "s",
		RayJobs:     []RayJob{{Name: "j", JobDeploymentStatus: "Running", JobStatus: "RUNNING", RayClusterName: "c", Reason: "R", Message: "m\nforged"}},
		RayClusters: []RayCluster{{Name: "c", ReadyWorkers: 1, DesiredWorker: 2, CreatedBy: "j", Conditions: []Condition{{Type: "Ready", Status: "False", Reason: "X", Message: "y"}}}},
		Pods:        []Pod{{Name: "p", NodeType: "worker", Group: "g", Phase: "Pending", Waiting: "Unschedulable"}},
		PodPhases:   map[string]int{"Pending": 1, "Running": 2},
		Claims:      []Claim{{Name: "cl", Pod: "p"}},
		Services:    []Object{{Name: "svc"}},
		Deployments: []Deployment{{Name: "d", Ready: 1, Desired: 2}},
		Admissions:  []Admission{{Object: "RayJob/j", Kind: "Workload", State: AdmissionAdmitted}},
		Others:      []Object{{Kind: "ConfigMap", Name: "cm"}},
		Problems:    []Problem{{Object: "Pod/p", Reason: "Pending", Message: "0/3 nodes"}},
	}
	assert.Equal(t, `run r in namespace ns: stuck
  s
RayJob j: Running, job RUNNING, cluster c
  R: m\nforged
RayCluster c: state -, workers ready 1/2, created by j
  Ready=False X y
Pods: 1 Pending, 2 Running
  p (worker g): Pending: Unschedulable
ResourceClaim cl (pod p): not allocated
Service svc: -
Deployment d: 1/2 ready
RayJob/j Workload admitted
ConfigMap cm
Problems:
  Pod/p Pending: 0/3 nodes
`, r.Text())
	out, err := r.Format("json")
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal([]byte(out), &back))
	assert.Equal(t, r, back)
	out, err = r.Format("text")
	require.NoError(t, err)
	assert.Equal(t, r.Text(), out)
}

// A watch stops at a verdict nothing changes without someone acting.
func TestFinal(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Report
		want bool
	}{
		{"failed", Report{Verdict: Failed}, true},
		{"not found", Report{Verdict: NotFound}, true},
		{"succeeded, cleaned up", Report{Verdict: Succeeded, RayJobs: []RayJob{{Cleanup: "done"}}}, true},
		{"succeeded, cleanup pending", Report{Verdict: Succeeded, RayJobs: []RayJob{{Cleanup: "pending"}}}, false},
		{"stuck", Report{Verdict: Stuck}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.r.Final()) })
	}
}
