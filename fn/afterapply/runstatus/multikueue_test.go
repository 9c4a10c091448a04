package runstatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
