package review_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// whoWaitsJob is a RayJob whose pods carry the KAI queue label and
// topology of their own; the object's labels and annotations are %s.
const whoWaitsJob = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: j
  namespace: lab
  %s
spec:
  entrypoint: python x.py
  rayClusterSpec:
    headGroupSpec:
      template: {metadata: {labels: {kai.scheduler/queue: team}}, spec: {containers: [{name: h, image: img:h}]}}
    workerGroupSpecs:
    - groupName: g
      replicas: 2
      template:
        metadata: {labels: {kai.scheduler/queue: team}}
        spec: {containers: [{name: w, image: img:w, resources: {limits: {nvidia.com/gpu: 8}}}]}
`

// A change of the Kueue priority class or LocalQueue, of the KAI queue on
// the object (KAI's pod grouper reads the top owner's label before the
// pod's) or of the run-wide topology annotations (the PodGroup's own
// constraint, binding every pod) changes who waits and who is preempted:
// diff and the review name each, before → after.
func TestWhoWaitsChangesAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name, before, after, key, line string
	}{
		{name: "Kueue priority class",
			before: "labels: {kueue.x-k8s.io/queue-name: lab-queue, kueue.x-k8s.io/priority-class: low}",
			after:  "labels: {kueue.x-k8s.io/queue-name: lab-queue, kueue.x-k8s.io/priority-class: urgent}",
			key:    "RayJob/lab/j kueue priority-class", line: "low → urgent"},
		{name: "Kueue LocalQueue",
			before: "labels: {kueue.x-k8s.io/queue-name: lab-queue}",
			after:  "labels: {kueue.x-k8s.io/queue-name: other-team}",
			key:    "RayJob/lab/j kueue queue", line: "lab-queue → other-team"},
		{name: "KAI queue on the object",
			before: "labels: {kai.scheduler/queue: team}",
			after:  "labels: {kai.scheduler/queue: production}",
			key:    "RayJob/lab/j queue", line: "team → production"},
		{name: "run-wide topology",
			before: "annotations: {kai.scheduler/topology: t, kai.scheduler/topology-required-placement: rack}",
			after:  "annotations: {kai.scheduler/topology: t, kai.scheduler/topology-preferred-placement: rack}",
			key:    "RayJob/lab/j run-wide required-placement", line: "rack → (none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := review.Parse("r", "r.yaml", []byte(sprintf(whoWaitsJob, tc.before)))
			require.NoError(t, err)
			cur, err := review.Parse("r", "r.yaml", []byte(sprintf(whoWaitsJob, tc.after)))
			require.NoError(t, err)
			s := review.Diff(review.Render{"r": old}, review.Render{"r": cur})
			require.Len(t, s.Runs, 1)
			var keys []string
			for _, c := range s.Runs[0].Scheduling {
				keys = append(keys, c.Key)
			}
			assert.Contains(t, keys, tc.key)
			assert.Contains(t, s.Text(), tc.key+": "+tc.line+"\n")
			field := strings.TrimPrefix(tc.key, "RayJob/lab/j ")
			md := s.Markdown()
			assert.Contains(t, md, "| scheduling: `RayJob/lab/j` "+field+" |")
			assert.Contains(t, md, "Queue, priority or topology change in 1 run (who waits, who is preempted): `r`.")
		})
	}
}
