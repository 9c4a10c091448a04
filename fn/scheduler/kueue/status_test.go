package kueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

func unstructuredOf(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(y), &u.Object))
	return u
}

// A Workload's most decisive condition wins; one of no owner of the run
// is none of its admissions.
func TestWorkloadAdmission(t *testing.T) {
	cond := func(typ, status string) string {
		return "{type: " + typ + ", status: '" + status + "', reason: R" + typ + ", message: m}"
	}
	wl := func(conds ...string) string {
		s := "metadata: {name: w, labels: {kueue.x-k8s.io/job-uid: u}}\nspec: {queueName: lab}\nstatus: {admission: {clusterQueue: cq}, conditions: ["
		for i, c := range conds {
			if i > 0 {
				s += ", "
			}
			s += c
		}
		return s + "]}"
	}
	w := func(state, reason, msg string) scheduler.Admission {
		return scheduler.Admission{Object: "RayJob/j", Kind: "Workload", Name: "w", State: state, Queue: "lab", Reason: reason, Message: msg}
	}
	for _, tc := range []struct {
		name, obj string
		want      scheduler.Admission
	}{
		{"no condition yet", wl(), w(scheduler.AdmissionQueued, "", "no quota reserved yet")},
		{"quota reserved", wl(cond("QuotaReserved", "True")), w(scheduler.AdmissionReserved, "RQuotaReserved", "m")},
		{"admitted", wl(cond("QuotaReserved", "True"), cond("Admitted", "True")), w(scheduler.AdmissionAdmitted, "RAdmitted", "by ClusterQueue cq")},
		{"evicted over admitted", wl(cond("Admitted", "True"), cond("Evicted", "True")), w(scheduler.AdmissionEvicted, "REvicted", "m")},
		{"evicted, the quota still reserved", wl(cond("QuotaReserved", "True"), "{type: Evicted, status: 'True', reason: AdmissionCheck, message: m, lastTransitionTime: '2026-12-07T10:00:00Z'}"),
			func() scheduler.Admission {
				a := w(scheduler.AdmissionEvicted, "AdmissionCheck", "m")
				a.HoldsQuota, a.EvictedAt = true, time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
				return a
			}()},
		{"preempted over evicted", wl(cond("Evicted", "True"), cond("Preempted", "True")), w(scheduler.AdmissionPreempted, "RPreempted", "m")},
		{"finished over all", wl(cond("Preempted", "True"), cond("Finished", "True")), w(scheduler.AdmissionFinished, "RFinished", "m")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := Integration{}.StatusReads()
			require.Len(t, reads, 1)
			got, ok := reads[0].Admission(unstructuredOf(t, tc.obj), map[string]string{"u": "RayJob/j"})
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
			_, ok = reads[0].Admission(unstructuredOf(t, tc.obj), map[string]string{"other": "RayJob/k"})
			assert.False(t, ok, "a Workload of another job")
		})
	}
}

// Workloads are listed by the owners' UIDs, and not at all without one.
func TestWorkloadSelector(t *testing.T) {
	for _, tc := range []struct {
		name string
		uids []string
		want string
		ok   bool
	}{
		{"none", nil, "", false},
		{"two", []string{"a", "b"}, "kueue.x-k8s.io/job-uid in (a,b)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, ok := Integration{}.StatusReads()[0].Selector("app=x", tc.uids)
			assert.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.want, sel)
			}
		})
	}
}
