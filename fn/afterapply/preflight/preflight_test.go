package preflight

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

func TestPodSecurityLine(t *testing.T) {
	cases := []struct {
		name, need string
		nsOut      kube.Outcome
		labels     map[string]string
		want       State
	}{
		{"privileged namespace admits privileged", "privileged", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, OK},
		{"baseline namespace refuses privileged", "privileged", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, Missing},
		{"restricted namespace refuses baseline", "baseline", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}, Missing},
		{"baseline namespace admits restricted", "restricted", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, OK},
		{"no label: the cluster default is unknown", "baseline", kube.Found, nil, CannotTell},
		{"no label, restricted fits any default", "restricted", kube.Found, nil, OK},
		{"unknown level", "baseline", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "strict"}, CannotTell},
		{"namespace unreadable", "baseline", kube.Forbidden, nil, CannotTell},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := podSecurityLine(Space{Namespace: "ns", PodSecurity: c.need, PodSecurityReason: []string{"IPC_LOCK"}}, c.nsOut, c.labels)
			assert.Equal(t, c.want, l.State, l.Detail)
			if c.want == Missing {
				assert.Contains(t, l.Detail, "IPC_LOCK")
			}
		})
	}
}

func TestVersionsOf(t *testing.T) {
	got := versionsOf("ray.io", []string{"ray.io/v1", "v1", "resource.k8s.io/v1", "ray.io/v1", "ray.io/v1alpha1"})
	assert.Equal(t, []string{"ray.io/v1", "ray.io/v1alpha1"}, got)
}

func TestOptional(t *testing.T) {
	l := optional(Line{Need: Need{Kind: "Secret", Optional: true}, State: Missing})
	assert.Equal(t, OK, l.State)
	l = optional(Line{Need: Need{Kind: "Secret"}, State: Missing})
	assert.Equal(t, Missing, l.State)
}

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
