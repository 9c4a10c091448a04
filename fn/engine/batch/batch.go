// Package batch renders many runs in one process, as every entry point
// with more than one run does (the KRM function's ResourceList, render-all
// and diff over a runs repository, the chart generator's variants): on
// every core, output in run order, under one memory budget, and with the
// one rule for two runs that render one object.
package batch

import (
	"fmt"
	"sync/atomic"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/parallel"
)

// Output is one run's render: what the entry point keeps of it, the
// identities of the objects it rendered (nil when it failed) and its size
// in bytes (what the call's output budget counts).
type Output[T any] struct {
	Value T
	IDs   []rendered.Identity
	Bytes int
}

// MaxOutput bounds what one call renders, all runs together: each run's
// input is bounded (recipe.MaxRunInput), but not how many runs one
// ResourceList or repository names, and a few small files can name
// thousands of runs of a thousand worker groups each (745 KB of output
// per run). It is what render-all --check and diff read back of a
// repository's manifests (source.MaxRenderTotal), so nothing rendered in
// one call is too large to review; past it the call stops starting runs
// and fails as a whole.
const MaxOutput = source.MaxRenderTotal

// ErrOverBudget is the error of a call whose runs render more than
// MaxOutput bytes together.
var ErrOverBudget = fmt.Errorf("the runs of this call render more than %d bytes together; expected fewer or smaller runs per call (split the list or the repository)", MaxOutput)

// Render calls run for runs 0..n-1 on every core and returns the outputs in
// run order, so they never depend on scheduling. Each worker has its own
// loader over src: a loader's cache is not safe for concurrent use, and per
// worker it still parses each shared base once. All share one job budget:
// a run admits its input bytes against it before parsing them, so
// concurrency is weighted by input size, not the core count, and the
// whole call stays within what recipe.JobBudget allows however many runs
// it is given.
//
// The output budget (MaxOutput) is for the whole call: once the runs
// rendered so far pass it, no further run starts and Render returns
// ErrOverBudget. Whether a call passes it depends only on its runs (their
// sizes add up the same in any order), so the error is deterministic too.
func Render[T any](src source.Source, n int, run func(l *recipe.Loader, i int) Output[T]) ([]Output[T], error) {
	job := recipe.NewJobBudget()
	var renderedBytes atomic.Int64
	outs := parallel.Map(n, func() func(int) Output[T] {
		l := recipe.NewLoader(src)
		l.Job = job
		return func(i int) Output[T] {
			if renderedBytes.Load() > MaxOutput {
				return Output[T]{}
			}
			job.Start(i)
			defer job.Done(i)
			l.JobRun = i
			o := run(l, i)
			renderedBytes.Add(int64(o.Bytes))
			return o
		}
	})
	if renderedBytes.Load() > MaxOutput {
		return nil, ErrOverBudget
	}
	return outs, nil
}

// Collisions is, per run in run order, one message per object the run
// renders that an earlier run of the batch renders differently: the later
// of two runs that render one object fails, naming both, and writes
// nothing. names are the runs' names, in the order of outs.
func Collisions[T any](names []string, outs []Output[T]) [][]string {
	claimed := owners{}
	msgs := make([][]string, len(outs))
	for i := range outs {
		msgs[i] = claimed.claim(names[i], outs[i].IDs)
	}
	return msgs
}
