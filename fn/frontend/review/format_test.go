package review

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The autoscaling ceiling is reported beside the count, never as it.
func TestAutoscalingCeilingInSummary(t *testing.T) {
	const worker = `
  - groupName: g
    replicas: 2
    maxReplicas: 6
    template:
      spec:
        containers:
        - {name: w, image: img:w, resources: {limits: {nvidia.com/gpu: 8}}}`
	before, err := Parse("r", "r.yaml", []byte(rayCluster(false, worker)))
	require.NoError(t, err)
	doc := strings.Replace(rayCluster(false, worker), "spec:\n  headGroupSpec:", "spec:\n  enableInTreeAutoscaling: true\n  headGroupSpec:", 1)
	after, err := Parse("r", "r.yaml", []byte(doc))
	require.NoError(t, err)
	s := Diff(Render{"r": before}, Render{"r": after})
	require.Len(t, s.Runs, 1)
	require.Equal(t, Totals{Nodes: 2, GPUs: 16}, s.Runs[0].After)
	require.Equal(t, Totals{Nodes: 6, GPUs: 48}, s.Runs[0].AfterCeiling)
	require.Contains(t, s.Text(), "autoscaling up to 2 GPU nodes, 16 GPUs → 6 GPU nodes, 48 GPUs\n")
	require.Contains(t, s.Markdown(), "| autoscaling up to | 2 GPU nodes, 16 GPUs | 6 GPU nodes, 48 GPUs |")
}
