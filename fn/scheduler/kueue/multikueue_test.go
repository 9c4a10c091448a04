package kueue

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
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
		{name: "admitted on a worker", state: scheduler.AdmissionAdmitted,
			status: map[string]any{"clusterName": "worker-1"}, worker: "worker-1"},
		{name: "not a cluster name is dropped", state: scheduler.AdmissionAdmitted,
			status: map[string]any{"clusterName": "worker-1\n::error::x"}},
		{name: "a lost worker's check says why", state: scheduler.AdmissionReserved,
			status: map[string]any{"admissionChecks": []any{
				map[string]any{"name": "mk", "state": "Retry", "message": "Reserving remote lost"},
				map[string]any{"name": "other", "state": "Ready", "message": "fine"},
			}},
			message: "admission check mk Retry: Reserving remote lost"},
		{name: "a worker's long message is bounded", state: scheduler.AdmissionQueued,
			status:         map[string]any{"admissionChecks": []any{map[string]any{"name": "mk", "state": "Pending", "message": long}}},
			messageMaxSize: scheduler.MaxReported + 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := scheduler.Admission{State: tc.state}
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
