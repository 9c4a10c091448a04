// Package batch renders many runs in one process, as every entry point
// with more than one run does (the KRM function's ResourceList, render-all
// and diff over a runs repository, the chart generator's variants): on
// every core, output in run order, under one memory budget, and with the
// one rule for two runs that render one object.
package batch

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/parallel"
)

// Output is one run's render: what the entry point keeps of it, and the
// identities of the objects it rendered (nil when it failed).
type Output[T any] struct {
	Value T
	IDs   []emit.Identity
}

// Render calls run for runs 0..n-1 on every core and returns the outputs in
// run order, so they never depend on scheduling. Each worker has its own
// loader over src: a loader's cache is not safe for concurrent use, and per
// worker it still parses each shared base once. All share one job budget:
// a run admits its input bytes against it before parsing them, so
// concurrency is weighted by input size, not the core count, and the
// whole call stays within what recipe.JobBudget allows however many runs
// it is given.
func Render[T any](src source.Source, n int, run func(l *recipe.Loader, i int) Output[T]) []Output[T] {
	job := recipe.NewJobBudget()
	return parallel.Map(n, func() func(int) Output[T] {
		l := recipe.NewLoader(src)
		l.Job = job
		return func(i int) Output[T] {
			job.Start(i)
			defer job.Done(i)
			l.JobRun = i
			return run(l, i)
		}
	})
}

// Collisions is, per run in run order, one message per object the run
// renders that an earlier run of the batch renders differently: the later
// of two runs that render one object fails, naming both, and writes
// nothing. names are the runs' names, in the order of outs.
func Collisions[T any](names []string, outs []Output[T]) [][]string {
	owners := emit.Owners{}
	msgs := make([][]string, len(outs))
	for i := range outs {
		msgs[i] = owners.Claim(names[i], outs[i].IDs)
	}
	return msgs
}
