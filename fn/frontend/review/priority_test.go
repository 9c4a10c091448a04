package review_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// priorityJob is a RayJob named %s whose object carries %s (labels) and
// whose pods carry priorityClassName %s.
const priorityJob = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: %s
  namespace: lab
  %s
spec:
  entrypoint: python x.py
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {priorityClassName: %s, containers: [{name: h, image: img:h}]}}
    workerGroupSpecs:
    - groupName: g
      replicas: 2
      template:
        spec: {priorityClassName: %s, containers: [{name: w, image: img:w, resources: {limits: {nvidia.com/gpu: 8}}}]}
`

func job(t *testing.T, name, labels, class string) *review.RunFacts {
	t.Helper()
	r, err := review.Parse(name, name+".yaml", []byte(sprintf(priorityJob, name, labels, class, class)))
	require.NoError(t, err)
	return r
}

// A priority class change says whom the run may now preempt: under Kueue
// lower-priority Workloads of its ClusterQueue and cohort as the policy
// allows, under KAI lower-priority gangs of its queue (reclaim going by
// quota); the other runs of the repository in the same queue are named
// with their class. The review reads no cluster, so it says "may" and
// points at preflight.
func TestPriorityChangeNamesWhoMayBePreempted(t *testing.T) {
	const kq, kai = "labels: {kueue.x-k8s.io/queue-name: lab-queue, kueue.x-k8s.io/priority-class: %s}", "labels: {kai.scheduler/queue: team}"
	for _, tc := range []struct {
		name                string
		before, after, peer *review.RunFacts
		wants               []string
	}{
		{name: "Kueue WorkloadPriorityClass raised",
			before: job(t, "r", sprintf(kq, "low"), "x"), after: job(t, "r", sprintf(kq, "urgent"), "x"), peer: job(t, "peer", sprintf(kq, "low"), "x"),
			wants: []string{"RayJob/lab/r: WorkloadPriorityClass low → urgent: if urgent's value is the higher, Kueue may preempt lower-priority Workloads of LocalQueue lab-queue's ClusterQueue, and of its cohort",
				"the other runs of this repository in lab-queue: peer (low)"}},
		{name: "KAI priorityClassName raised",
			before: job(t, "r", kai, "train"), after: job(t, "r", kai, "build"), peer: job(t, "peer", kai, "train"),
			wants: []string{"RayJob/lab/r: priorityClassName train → build: if build's value is the higher, KAI may preempt running lower-priority gangs of queue team (reclaim between queues goes by quota, not priority)",
				"the other runs of this repository in team: peer (train)"}},
		{name: "KAI alone in its queue",
			before: job(t, "r", kai, "train"), after: job(t, "r", kai, "build"), peer: job(t, "peer", "labels: {kai.scheduler/queue: other}", "train"),
			wants: []string{"; no other run of this repository is in team"}},
		{name: "no priority change, no preemption line",
			before: job(t, "r", kai, "train"), after: job(t, "r", "labels: {kai.scheduler/queue: prod}", "train"), peer: job(t, "peer", kai, "train")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := review.Diff(review.Render{"r": tc.before, "peer": tc.peer}, review.Render{"r": tc.after, "peer": tc.peer})
			require.Len(t, s.Runs, 1)
			got := strings.Join(s.Runs[0].Preemption, "\n")
			if len(tc.wants) == 0 {
				assert.Empty(t, got)
				assert.NotContains(t, s.Text(), "preemption")
				return
			}
			for _, w := range tc.wants {
				assert.Contains(t, got, w)
			}
			assert.Contains(t, s.Text(), "  preemption  RayJob/lab/r: ")
			assert.Contains(t, s.Markdown(), "\nPreemption:\n\n- ")
		})
	}
}
