package preflight

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// PodShapes lists every pod the input makes, counted as KubeRay starts
// them (min/max clamp), heads and CPU groups included; a clusterSelector
// job makes only its submitter (K8sJobMode, the default), a suspended run
// none.
func TestPodShapes(t *testing.T) {
	docs, err := rendered.Decode("run.yaml", []byte(`
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: j}
spec:
  submissionMode: HTTPMode
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: head, resources: {requests: {cpu: "2"}}}]}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 4
      minReplicas: 16
      maxReplicas: 16
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.product: H200}
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]
    - groupName: cpu
      replicas: 2
      template: {spec: {containers: [{name: c}]}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: submit}
spec:
  clusterSelector: {ray.io/cluster: x}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: queued}
spec:
  suspend: true
  submissionMode: HTTPMode
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: head}]}}
    workerGroupSpecs:
    - {groupName: gpu, replicas: 2, template: {spec: {containers: [{name: w}]}}}
`))
	require.NoError(t, err)
	shapes, _, err := PodShapes(docs)
	require.NoError(t, err)
	var got []string
	for _, s := range shapes {
		got = append(got, fmt.Sprintf("%s %s x%d", s.Object, s.Role, s.Count))
	}
	// A suspended (or queued) RayJob has no pods yet but is placed at the
	// size it runs at: preflight answers "will it fit once resumed".
	assert.Equal(t, []string{"RayJob/j head x1", "RayJob/j worker group gpu x16", "RayJob/j worker group cpu x2", "RayJob/submit submitter x1",
		"RayJob/queued head x1", "RayJob/queued worker group gpu x2"}, got)
	assert.Equal(t, map[string]string{"nvidia.com/gpu.product": "H200"}, shapes[1].Spec.NodeSelector)
}

// Why no node takes a pod: each reason with how many nodes gave it,
// sorted; no reason at all is a cluster without nodes.
func TestReasons(t *testing.T) {
	for _, tc := range []struct {
		name string
		why  map[string]int
		want string
	}{
		{"no nodes", nil, "the cluster has no nodes"},
		{"one", map[string]int{"untolerated taint": 2}, "untolerated taint (2)"},
		{"sorted", map[string]int{"not enough free nvidia.com/gpu": 3, "node affinity": 1}, "node affinity (1), not enough free nvidia.com/gpu (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, reasons(tc.why)) })
	}
}
