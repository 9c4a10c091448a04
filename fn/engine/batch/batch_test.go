package batch_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/batch"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// Outputs come back in run order whatever the workers' order, each run
// loads through its worker's loader, and the loaders share one job budget.
func TestRenderInRunOrder(t *testing.T) {
	src := source.Memory{}
	for i := range 50 {
		src[fmt.Sprintf("r%d.yaml", i)] = []byte(fmt.Sprintf("n: %d\n", i))
	}
	var loads atomic.Int32
	outs, err := batch.Render(src, 50, func(l *recipe.Loader, i int) batch.Output[string] {
		require.NotNil(t, l.Job, "every loader charges the job's budget")
		require.Equal(t, i, l.JobRun)
		loaded, err := l.Load(fmt.Sprintf("r%d.yaml", i))
		require.NoError(t, err)
		loads.Add(1)
		v, _ := loaded.Tree.Get("n")
		return batch.Output[string]{Value: fmt.Sprint(v)}
	})
	require.NoError(t, err)
	require.Len(t, outs, 50)
	for i, o := range outs {
		require.Equal(t, fmt.Sprint(i), o.Value)
	}
	require.EqualValues(t, 50, loads.Load())
}

// The later of two runs rendering one object differently fails, naming
// both; the same object rendered identically, or by a failed run (no
// identities), is no collision.
func TestCollisions(t *testing.T) {
	id := func(sum byte) []rendered.Identity {
		return []rendered.Identity{{ID: "ray.io/RayJob/ml/train", Describe: "RayJob ml/train", Sum: [32]byte{sum}}}
	}
	outs := []batch.Output[int]{{IDs: id('a')}, {IDs: nil}, {IDs: id('a')}, {IDs: id('b')}}
	msgs := batch.Collisions([]string{"first", "failed", "same", "other"}, outs)
	require.Empty(t, msgs[0])
	require.Empty(t, msgs[1])
	require.Empty(t, msgs[2], "an identical object is the same apply")
	require.Len(t, msgs[3], 1)
	require.True(t, strings.Contains(msgs[3][0], "RayJob ml/train is also rendered by run first, differently"), msgs[3][0])
}

// A call whose runs render more than MaxOutput bytes together fails as a
// whole, and stops starting runs once past it: of 10,000 runs of 1 MiB
// each, about MaxOutput's worth start.
func TestOutputBudget(t *testing.T) {
	var started atomic.Int32
	outs, err := batch.Render(source.Memory{}, 10000, func(_ *recipe.Loader, i int) batch.Output[int] {
		started.Add(1)
		return batch.Output[int]{Value: i, Bytes: 1 << 20}
	})
	require.ErrorIs(t, err, batch.ErrOverBudget)
	require.Nil(t, outs)
	require.Less(t, started.Load(), int32(batch.MaxOutput>>20)+64, "runs kept starting past the budget")

	outs, err = batch.Render(source.Memory{}, 30, func(_ *recipe.Loader, i int) batch.Output[int] {
		return batch.Output[int]{Value: i, Bytes: 1 << 20}
	})
	require.NoError(t, err, "30 MiB is within the budget")
	require.Len(t, outs, 30)
}
