package kai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// A PodGroup's last scheduling condition says why KAI has not placed the
// gang; PodGroups are listed by the run's own selector.
func TestPodGroupAdmission(t *testing.T) {
	pg := "metadata: {name: pg, ownerReferences: [{kind: RayJob, name: j, apiVersion: ray.io/v1, uid: u}]}\nspec: {queue: rl}\n"
	for _, tc := range []struct {
		name, obj string
		want      scheduler.Admission
	}{
		{"placed", pg + "status: {schedulingConditions: [{status: 'False'}]}",
			scheduler.Admission{Object: "RayJob/j", Kind: "PodGroup", Name: "pg", State: scheduler.AdmissionScheduled, Queue: "rl"}},
		{"no condition yet", pg, scheduler.Admission{Object: "RayJob/j", Kind: "PodGroup", Name: "pg", State: scheduler.AdmissionScheduled, Queue: "rl"}},
		{"unschedulable", pg + "status: {schedulingConditions: [{status: 'False'}, {status: 'True', reason: NotReady, reasons: [{message: a}, {message: b}]}]}",
			scheduler.Admission{Object: "RayJob/j", Kind: "PodGroup", Name: "pg", State: scheduler.AdmissionUnschedulable, Queue: "rl", Reason: "NotReady", Message: "a; b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(tc.obj), &u.Object))
			reads := Integration{}.StatusReads()
			require.Len(t, reads, 1)
			sel, ok := reads[0].Selector("app=x", nil)
			assert.True(t, ok)
			assert.Equal(t, "app=x", sel)
			got, ok := reads[0].Admission(u, nil)
			assert.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
