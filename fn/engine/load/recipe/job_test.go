package recipe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobBudget: a run waits while the bytes in flight would pass
// JobInFlight, unless it is the oldest run rendering; Done releases what a
// run held and wakes the waiters.
func TestJobBudget(t *testing.T) {
	const half = JobInFlight / 2
	for _, tc := range []struct {
		name string
		// held are bytes runs 0, 1, ... hold (0: started, holding none;
		// -1: not started, or done).
		held []int
		run  int
		n    int
		// waits: Acquire blocks until Done(release).
		waits   bool
		release int
	}{
		{"within the budget", []int{half}, 1, half, false, 0},
		{"over it", []int{half, 0}, 1, half + 1, true, 0},
		{"the oldest never waits", []int{-1, JobInFlight}, 0, JobInFlight, false, 0},
		{"nor past the budget", []int{0, JobInFlight}, 0, 1, false, 0},
		{"a younger run's release", []int{0, half, JobInFlight - half}, 1, 1, true, 2},
		{"the oldest once the older one is done", []int{0, JobInFlight}, 1, 1, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJobBudget()
			// acquire is Acquire in the background; within reports whether
			// it is done within d.
			acquire := func(run, n int) chan struct{} {
				done := make(chan struct{})
				go func() { j.Acquire(run, n); close(done) }()
				return done
			}
			within := func(done chan struct{}, d time.Duration) bool {
				select {
				case <-done:
					return true
				case <-time.After(d):
					return false
				}
			}
			for run, n := range tc.held {
				if n >= 0 {
					j.Start(run)
				}
				if n > 0 {
					require.True(t, within(acquire(run, n), 5*time.Second), "run %d: %d bytes", run, n)
				}
			}
			done := acquire(tc.run, tc.n)
			if tc.waits {
				require.False(t, within(done, 50*time.Millisecond), "acquired over the budget")
				j.Done(tc.release)
			}
			require.True(t, within(done, 5*time.Second), "still waiting")
			j.Done(tc.run)
			for run, n := range tc.held {
				if n >= 0 && run != tc.run && (!tc.waits || run != tc.release) {
					j.Done(run)
				}
			}
			assert.Zero(t, j.inFlight, "every byte released")
			require.Empty(t, j.held)
		})
	}
}
