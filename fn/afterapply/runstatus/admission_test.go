package runstatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func unstructuredOf(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A Workload's most decisive condition wins; a PodGroup's last scheduling
// condition says why KAI has not placed the gang.
func TestAdmissionStates(t *testing.T) {
	cond := func(typ, status string) string {
		return "{type: " + typ + ", status: '" + status + "', reason: R" + typ + ", message: m}"
	}
	wl := func(conds ...string) string {
		s := "metadata: {name: w}\nspec: {queueName: lab}\nstatus: {admission: {clusterQueue: cq}, conditions: ["
		for i, c := range conds {
			if i > 0 {
				s += ", "
			}
			s += c
		}
		return s + "]}"
	}
	pg := "metadata: {name: pg, ownerReferences: [{kind: RayJob, name: j, apiVersion: ray.io/v1, uid: u}]}\nspec: {queue: rl}\n"
	for _, tc := range []struct {
		name, obj string
		workload  bool
		want      Admission
		waits     bool
	}{
		{"no condition yet", wl(), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionQueued, Queue: "lab", Message: "no quota reserved yet"}, true},
		{"quota reserved", wl(cond("QuotaReserved", "True")), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionReserved, Queue: "lab", Reason: "RQuotaReserved", Message: "m"}, true},
		{"admitted", wl(cond("QuotaReserved", "True"), cond("Admitted", "True")), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionAdmitted, Queue: "lab", Reason: "RAdmitted", Message: "by ClusterQueue cq"}, false},
		{"evicted over admitted", wl(cond("Admitted", "True"), cond("Evicted", "True")), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionEvicted, Queue: "lab", Reason: "REvicted", Message: "m"}, true},
		{"preempted over evicted", wl(cond("Evicted", "True"), cond("Preempted", "True")), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionPreempted, Queue: "lab", Reason: "RPreempted", Message: "m"}, true},
		{"finished over all", wl(cond("Preempted", "True"), cond("Finished", "True")), true, Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionFinished, Queue: "lab", Reason: "RFinished", Message: "m"}, false},
		{"PodGroup placed", pg + "status: {schedulingConditions: [{status: 'False'}]}", false, Admission{Object: "RayJob/j", Kind: "PodGroup", Name: "pg", State: AdmissionScheduled, Queue: "rl"}, false},
		{"PodGroup unschedulable", pg + "status: {schedulingConditions: [{status: 'False'}, {status: 'True', reason: NotReady, reasons: [{message: a}, {message: b}]}]}", false,
			Admission{Object: "RayJob/j", Kind: "PodGroup", Name: "pg", State: AdmissionUnschedulable, Queue: "rl", Reason: "NotReady", Message: "a; b"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Admission
			if tc.workload {
				got = workloadAdmission("RayJob/j", unstructuredOf(t, tc.obj))
			} else {
				got = podGroupAdmission(unstructuredOf(t, tc.obj))
			}
			assert.Equal(t, tc.want, got)
			_, waits := waiting([]Admission{got})
			assert.Equal(t, tc.waits, waits)
		})
	}
	assert.Equal(t, "RayJob/j Workload queued (queue lab): Pending: no quota",
		Admission{Object: "RayJob/j", Kind: "Workload", State: AdmissionQueued, Queue: "lab", Reason: "Pending", Message: "no quota"}.describe())
	assert.Equal(t, "RayJob/j PodGroup scheduled", Admission{Object: "RayJob/j", Kind: "PodGroup", State: AdmissionScheduled}.describe())
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
