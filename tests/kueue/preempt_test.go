package kueue_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// A low-priority run holds the whole quota of a ClusterQueue that
// preempts lower priorities within it; preflight, asked about a
// high-priority run of the same queue before it is applied, predicts that
// Kueue admits it at once by preempting the first run, and Kueue does:
// the first run's Workload is evicted as preempted, the second admitted.
func TestPreemptionPredicted(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-preempt"
	require.NoError(t, kueue.PreemptingQueue(ctx, env, ns, "lab-queue", "lab-preempt", "16",
		map[string]any{"withinClusterQueue": "LowerPriority"}, waitFor))
	require.NoError(t, kueue.PriorityClass(ctx, env, "nrl-low", 10))
	require.NoError(t, kueue.PriorityClass(ctx, env, "nrl-high", 1000))

	lowDocs, lowObjs, lowName := render(t, "kq-low", ns, runparams.RayJob)
	withPriority(lowDocs, lowObjs, "nrl-low")
	require.NoError(t, env.Apply(ctx, ns, lowObjs))
	lowJob := rayJob(t, env, ns, lowName)
	admitted(t, env, k, ns, lowName)
	reserving(t, env, "lab-preempt", 1, 0) // preflight reads the ClusterQueue's count

	highDocs, highObjs, highName := render(t, "kq-high", ns, runparams.RayJob)
	withPriority(highDocs, highObjs, "nrl-high")
	line := localQueueLine(t, env, highDocs, ns)
	assert.Equal(t, preflight.OK, line.State, line.Detail)
	assert.Contains(t, line.Detail, "needs 16 nvidia.com/gpu; 0 of 16 free")
	assert.Contains(t, line.Detail, fmt.Sprintf("admitted now by preempting RayJob %s (priority 10)", lowName))

	require.NoError(t, env.Apply(ctx, ns, highObjs))
	require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to preempt "+lowName, func(ctx context.Context) (bool, string, error) {
		wl := workload(t, env, lowJob)
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Preempted" && m["status"] == "True" {
				return true, "", nil
			}
		}
		return false, "not preempted yet", nil
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
	admitted(t, env, k, ns, highName)
	assert.True(t, rayJob(t, env, ns, lowName).Spec.Suspend, "the preempted RayJob is suspended again")
}

// withPriority labels the run's RayJob with a WorkloadPriorityClass, in
// the documents preflight reads and the objects applied.
func withPriority(docs []rendered.Doc, objs []*unstructured.Unstructured, class string) {
	for _, d := range docs {
		if d.Kind != "RayJob" {
			continue
		}
		md, _ := d.Data["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		labels[vocab.KueuePriorityClassLabel] = class
	}
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			l := o.GetLabels()
			l[vocab.KueuePriorityClassLabel] = class
			o.SetLabels(l)
		}
	}
}
