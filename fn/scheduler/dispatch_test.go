package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A setup that named its workers says why one is not dispatched to: not
// named, or named and refused; one that named none says nothing.
func TestWorkersWhyNot(t *testing.T) {
	named := Workers{Known: true, Unlisted: "not listed", Named: map[string]string{"w1": "", "w2": "not Active"}}
	for _, tc := range []struct {
		name, worker, why string
		w                 Workers
	}{
		{"dispatched to", "w1", "", named},
		{"named, refused", "w2", "not Active", named},
		{"not named", "w3", "not listed", named},
		{"no worker named", "w3", "", Workers{Unlisted: "not listed"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.why, tc.w.WhyNot(tc.worker)) })
	}
}
