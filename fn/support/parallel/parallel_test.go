package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapKeepsJobOrder(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		var workers atomic.Int32
		got := Map(100, func() func(int) int {
			workers.Add(1)
			return func(i int) int { return i * i }
		})
		runtime.GOMAXPROCS(prev)
		require.Len(t, got, 100)
		for i, v := range got {
			require.Equal(t, i*i, v, "GOMAXPROCS=%d job %d", procs, i)
		}
		require.LessOrEqual(t, int(workers.Load()), procs, "one worker state per worker, not per job")
	}
}

func TestMapOfNothing(t *testing.T) {
	called := false
	require.Empty(t, Map(0, func() func(int) string { called = true; return nil }))
	require.False(t, called, "no worker is built when there is no job")
}

// Each worker's state belongs to that worker: a counter in the closure
// starts at 1 once per worker (not once per job, not once overall), and
// -race sees no shared writes.
func TestMapWorkerStateIsPerWorker(t *testing.T) {
	counts := Map(1000, func() func(int) int {
		seen := 0
		return func(int) int { seen++; return seen }
	})
	firsts := 0
	for _, c := range counts {
		if c == 1 {
			firsts++
		}
	}
	require.GreaterOrEqual(t, firsts, 1)
	require.LessOrEqual(t, firsts, runtime.GOMAXPROCS(0))
}
