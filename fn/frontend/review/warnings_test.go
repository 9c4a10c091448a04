package review_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// A run whose objects are equal but which gains a warning (a recipe asking
// for fewer nodes than the cluster gives: idle nodes) is a change, and the
// summary says which warning is new and which is gone.
func TestDiffReportsWarnings(t *testing.T) {
	idle := "p.yaml: kuberay.training.spec.workerGroupSpecs[*].replicas: the training cluster provides 4 GPU nodes but the recipe's cluster.num_nodes is 3 (set by r.yaml): 1 nodes will sit idle"
	old := "p.yaml: launch.codeSource: is upload"
	base, cur := committed(t), committed(t)
	run := *cur["qwen3-math-4n"]
	run.Warnings = []string{idle}
	cur["qwen3-math-4n"] = &run
	prev := *base["qwen3-math-4n"]
	prev.Warnings = []string{old}
	base["qwen3-math-4n"] = &prev

	s := review.Diff(base, cur)
	require.Len(t, s.Runs, 1)
	d := s.Runs[0]
	assert.Equal(t, review.Changed, d.Status)
	assert.Empty(t, d.ObjectsChanged)
	assert.Equal(t, []string{idle}, d.WarningsAdded)
	assert.Equal(t, []string{old}, d.WarningsResolved)
	assert.Contains(t, s.Text(), "  warnings    + "+idle+"\n              - "+old+"\n")
	assert.Contains(t, s.Markdown(), "\nWarnings:\n\n- `+ "+idle+"`\n- `- "+old+"`\n")

	// The same warnings on both sides: unchanged.
	s = review.Diff(cur, cur)
	assert.Empty(t, s.Runs)
	assert.Equal(t, 4, s.Unchanged)
}
