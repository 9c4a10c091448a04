// Package parallel runs independent jobs on every core and returns their
// results in job order, so output never depends on scheduling.
package parallel

import (
	"runtime"
	"sync"
)

// Map calls job(i) for i in [0, n) on up to GOMAXPROCS workers and returns
// the results by index. newWorker is called once per worker to build that
// worker's job function: state that is not safe for concurrent use (a
// recipe loader and its cache) lives in the closure, one copy per worker.
func Map[T any](n int, newWorker func() func(i int) T) []T {
	out := make([]T, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := newWorker()
			for i := range next {
				out[i] = job(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
