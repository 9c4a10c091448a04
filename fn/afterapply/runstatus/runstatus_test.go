package runstatus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVerdictExit(t *testing.T) {
	for v, want := range map[Verdict]int{
		Running: ExitOK, Succeeded: ExitOK, Progressing: ExitOK, Suspended: ExitOK, Stopped: ExitOK, Queued: ExitOK, Deleting: ExitOK,
		Stuck: ExitProblem, Failed: ExitProblem, NotFound: ExitNotFound,
	} {
		assert.Equal(t, want, v.Exit(), v)
	}
}

// A deleted object's line names the finalizers it waits on, escaped.
func TestDeletionText(t *testing.T) {
	gone := metav1.NewTime(time.Unix(0, 0))
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		want string
	}{
		{"live", metav1.ObjectMeta{Finalizers: []string{"f"}}, ""},
		{"deleting", metav1.ObjectMeta{DeletionTimestamp: &gone}, ", being deleted"},
		{"waiting on finalizers", metav1.ObjectMeta{DeletionTimestamp: &gone, Finalizers: []string{"a/b", "c\nd"}}, `, being deleted (finalizers a/b, c\nd)`},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, deletionOf(tc.meta).text()) })
	}
	assert.Equal(t, "a=1,b=2", selectorText(map[string]string{"b": "2", "a": "1"}))
	assert.Equal(t, "New", orDash(""))
}
