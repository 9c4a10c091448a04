package kueue_test

import (
	"context"
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

// A low-priority run holds the whole quota of a ClusterQueue; preflight,
// asked about a high-priority run of the same queue before it is applied,
// predicts what Kueue does, and Kueue does it: under withinClusterQueue
// LowerPriority it admits the new run at once by preempting the first
// (whose Workload is evicted as preempted); under Kueue's default (Never)
// the new run stays queued and the first keeps running.
func TestPreemptionPredicted(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	require.NoError(t, kueue.PriorityClass(ctx, env, "nrl-low", 10))
	require.NoError(t, kueue.PriorityClass(ctx, env, "nrl-high", 1000))
	for _, tc := range []struct {
		name, ns  string
		spec      map[string]any
		borrower  bool // the low run borrows all its GPUs from the high run's ClusterQueue
		predicted string
		preempts  bool
	}{
		{"LowerPriority preempts", "kq-preempt", map[string]any{"preemption": map[string]any{"withinClusterQueue": "LowerPriority"}}, false,
			"0 of 16 free: admitted now by preempting RayJob kq-preempt-low (priority 10)", true},
		{"Never queues", "kq-nopreempt", nil, false, "0 of 16 free: queued until other Workloads finish", false},
		{"reclaimWithinCohort takes back what a cohort peer borrowed", "kq-reclaim",
			map[string]any{"cohortName": "kq-reclaim", "preemption": map[string]any{"reclaimWithinCohort": "Any"}}, true,
			"16 of 16 free: admitted now by preempting RayJob kq-reclaim-b/kq-reclaim-low (priority 10)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, cq := tc.ns, tc.ns+"-cq"
			require.NoError(t, kueue.PreemptingQueue(ctx, env, ns, "lab-queue", cq, "16", tc.spec, waitFor))
			lowNS, lowCQ := ns, cq
			if tc.borrower {
				lowNS, lowCQ = ns+"-b", cq+"-b"
				require.NoError(t, kueue.PreemptingQueue(ctx, env, lowNS, "lab-queue", lowCQ, "0", map[string]any{"cohortName": tc.spec["cohortName"]}, waitFor))
			}
			lowDocs, lowObjs, lowName := render(t, ns+"-low", lowNS, runparams.RayJob)
			withPriority(lowDocs, lowObjs, "nrl-low")
			require.NoError(t, env.Apply(ctx, lowNS, lowObjs))
			lowJob := rayJob(t, env, lowNS, lowName)
			admitted(t, env, k, lowNS, lowName)
			reserving(t, env, lowCQ, 1, 0) // preflight reads the ClusterQueues' counts

			highDocs, highObjs, highName := render(t, ns+"-high", ns, runparams.RayJob)
			withPriority(highDocs, highObjs, "nrl-high")
			line := localQueueLine(t, env, highDocs, ns)
			assert.Equal(t, preflight.OK, line.State, line.Detail)
			assert.Contains(t, line.Detail, "needs 16 nvidia.com/gpu; ")
			assert.Contains(t, line.Detail, tc.predicted)

			require.NoError(t, env.Apply(ctx, ns, highObjs))
			if tc.preempts {
				require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to preempt "+lowName, func(ctx context.Context) (bool, string, error) {
					return condition(workload(t, env, lowJob), "Preempted"), "not preempted yet", nil
				}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
				admitted(t, env, k, ns, highName)
				assert.True(t, rayJob(t, env, lowNS, lowName).Spec.Suspend, "the preempted RayJob is suspended again")
				return
			}
			reserving(t, env, cq, 1, 1) // Kueue has seen the new run and left it pending
			assert.True(t, rayJob(t, env, ns, highName).Spec.Suspend, "the new run stays queued")
			assert.False(t, rayJob(t, env, ns, lowName).Spec.Suspend, "the first run keeps running")
			assert.False(t, condition(workload(t, env, lowJob), "Preempted"))
		})
	}
}

// condition is whether the Workload's condition typ is True.
func condition(wl *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
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
