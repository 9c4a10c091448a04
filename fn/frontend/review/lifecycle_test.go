package review_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// lifeJob is a run's RayJob with its labels, annotations, suspend, worker
// replicas and entrypoint set by the case; cm is the run's ConfigMap,
// which a stopped Kueue run keeps while its RayJob is left out.
func lifeJob(labels, annotations, suspend string, replicas int, entrypoint string) string {
	return sprintf(`apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: j
  labels: {%s}
  annotations: {%s}
spec:
  entrypoint: %s
  suspend: %s
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: h, image: img:h}]}}
    workerGroupSpecs:
    - groupName: g
      replicas: %s
      template: {spec: {containers: [{name: w, image: img:w, resources: {limits: {nvidia.com/gpu: 8}}}]}}
`, labels, annotations, entrypoint, suspend, strconv.Itoa(replicas))
}

const lifeCM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: j-recipe}\ndata: {recipe.yaml: x}\n"

// The gate reads a run's state from its spec (runparams.StateFromSpec),
// never from the nemo-rl.nvidia.com/state annotation, which any profile or
// hand edit can write: a running run annotated stopped is still running,
// so an edit of what KubeRay reads once is refused; a Kueue run whose
// RayJob is left out is stopped; and an edit of a started Kueue run's pod
// sets restarts it, which the gate says.
func TestGateStateFromSpec(t *testing.T) {
	const (
		forged = "nemo-rl.nvidia.com/state: stopped"
		queue  = "kueue.x-k8s.io/queue-name: lab"
	)
	for _, tc := range []struct {
		name, before, after string
		never, restarts     string // a named field, "" for none
		lifecycle           string
	}{
		{name: "running, annotated stopped on both sides: an entrypoint edit is refused",
			before: lifeJob("", forged, "false", 2, "python a.py"), after: lifeJob("", forged, "false", 2, "python b.py"),
			never: "RayJob/j: spec.entrypoint"},
		{name: "running, annotated stopped in the change only: still refused, not a stop",
			before: lifeJob("", "", "false", 2, "python a.py"), after: lifeJob("", forged, "false", 2, "python b.py"),
			never: "RayJob/j: spec.entrypoint"},
		{name: "suspended in the change: stopped, the edit passes",
			before: lifeJob("", "", "false", 2, "python a.py"), after: lifeJob("", "", "true", 2, "python b.py"),
			lifecycle: "stopped by this change"},
		{name: "suspended on both sides, annotated running: stopped, the edit passes",
			before: lifeJob("", "", "true", 2, "python a.py"), after: lifeJob("", "nemo-rl.nvidia.com/state: run", "true", 2, "python b.py")},
		{name: "Kueue run, suspended by Kueue (queued): running, an entrypoint edit is refused",
			before: lifeJob(queue, "", "true", 2, "python a.py"), after: lifeJob(queue, "", "true", 2, "python b.py"),
			never: "RayJob/j: spec.entrypoint"},
		{name: "Kueue run stopped: its RayJob left out, the ConfigMap stays",
			before: lifeJob(queue, "", "false", 2, "python a.py") + "---\n" + lifeCM, after: lifeCM,
			lifecycle: "stopped by this change"},
		{name: "Kueue run started again",
			before: lifeCM, after: lifeJob(queue, "", "false", 2, "python b.py") + "---\n" + lifeCM,
			lifecycle: "started again by this change"},
		{name: "a RayJob added to a render of ConfigMaps only, without Kueue: no restart",
			before: lifeCM, after: lifeJob("", "", "false", 2, "python b.py") + "---\n" + lifeCM},
		{name: "Kueue run scaled 2 -> 1: a restart from step 0",
			before: lifeJob(queue, "", "false", 2, "python a.py"), after: lifeJob(queue, "", "false", 1, "python a.py"),
			restarts: "RayJob/j: spec.rayClusterSpec.workerGroupSpecs[0].replicas"},
		{name: "Kueue run scaled and its entrypoint edited: the restart runs the edit",
			before: lifeJob(queue, "", "false", 2, "python a.py"), after: lifeJob(queue, "", "false", 1, "python b.py"),
			restarts: "RayJob/j: spec.entrypoint, spec.rayClusterSpec.workerGroupSpecs[0].replicas"},
		{name: "run without Kueue scaled 2 -> 1: never applied",
			before: lifeJob("", "", "false", 2, "python a.py"), after: lifeJob("", "", "false", 1, "python a.py"),
			never: "RayJob/j: spec.rayClusterSpec.workerGroupSpecs[0].replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := review.Parse("r", "old.yaml", []byte(tc.before))
			require.NoError(t, err)
			after, err := review.Parse("r", "new.yaml", []byte(tc.after))
			require.NoError(t, err)
			s := review.Diff(review.Render{"r": before}, review.Render{"r": after})
			require.Len(t, s.Runs, 1)
			d := s.Runs[0]
			if tc.never == "" {
				assert.Empty(t, d.StartedEdits)
			} else {
				assert.Equal(t, []string{tc.never}, d.StartedEdits)
				assert.Contains(t, review.StartedRunRefusal(d), "would merge and never reach it")
			}
			if tc.restarts == "" {
				assert.Empty(t, d.StartedRestarts)
			} else {
				assert.Equal(t, []string{tc.restarts}, d.StartedRestarts)
				msg := review.StartedRestartRefusal(d)
				assert.Contains(t, msg, "a restart from step 0")
				assert.Contains(t, msg, "new Ray job id")
				assert.Contains(t, msg, "stop it (spec.state: stopped)")
				assert.NotContains(t, msg, "never reach it")
				assert.Contains(t, s.Text(), "  restart     "+tc.restarts+"\n")
				assert.Contains(t, s.Markdown(), "started Kueue run, restarts it from step 0")
			}
			assert.True(t, strings.HasPrefix(d.Lifecycle, tc.lifecycle), "lifecycle %q, expected %q", d.Lifecycle, tc.lifecycle)
			if tc.lifecycle == "" {
				assert.Empty(t, d.Lifecycle)
			}
		})
	}
}
