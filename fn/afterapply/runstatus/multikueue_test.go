package runstatus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDispatch(t *testing.T) {
	long := strings.Repeat("é", 400)
	for _, tc := range []struct {
		name           string
		status         map[string]any
		state          string
		worker         string
		message        string
		messageMaxSize int
	}{
		{name: "admitted on a worker", state: AdmissionAdmitted,
			status: map[string]any{"clusterName": "worker-1"}, worker: "worker-1"},
		{name: "not a cluster name is dropped", state: AdmissionAdmitted,
			status: map[string]any{"clusterName": "worker-1\n::error::x"}},
		{name: "a lost worker's check says why", state: AdmissionReserved,
			status: map[string]any{"admissionChecks": []any{
				map[string]any{"name": "mk", "state": "Retry", "message": "Reserving remote lost"},
				map[string]any{"name": "other", "state": "Ready", "message": "fine"},
			}},
			message: "admission check mk Retry: Reserving remote lost"},
		{name: "a worker's long message is bounded", state: AdmissionQueued,
			status:         map[string]any{"admissionChecks": []any{map[string]any{"name": "mk", "state": "Pending", "message": long}}},
			messageMaxSize: maxReported + 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Admission{State: tc.state}
			dispatch(&a, &unstructured.Unstructured{Object: map[string]any{"status": tc.status}})
			assert.Equal(t, tc.worker, a.Worker)
			if tc.message != "" {
				assert.Equal(t, tc.message, a.Message)
			}
			if tc.messageMaxSize > 0 {
				assert.LessOrEqual(t, len(a.Message), tc.messageMaxSize)
				assert.True(t, strings.HasSuffix(a.Message, "..."), a.Message)
			}
		})
	}
}

func TestFollowDispatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{name: "dispatched, no Pods here", r: Report{Summary: "RayJob x is Running",
			Admissions: []Admission{{Object: "RayJob/x", Worker: "worker-2"}}},
			want: "RayJob x is Running; RayJob/x was dispatched by MultiKueue to worker cluster worker-2: its Pods are there (run status against that cluster)"},
		{name: "Pods here", r: Report{Summary: "s", Pods: []Pod{{Name: "p"}},
			Admissions: []Admission{{Object: "RayJob/x", Worker: "worker-2"}}}, want: "s"},
		{name: "not dispatched", r: Report{Summary: "s", Admissions: []Admission{{Object: "RayJob/x"}}}, want: "s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			followDispatch(&tc.r)
			assert.Equal(t, tc.want, tc.r.Summary)
		})
	}
}
