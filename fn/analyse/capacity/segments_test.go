package capacity

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
)

// A segment's name leads back to its group; a name that only looks like
// one part of it does not.
func TestSegments(t *testing.T) {
	for _, tc := range []struct{ name, group string }{
		{SegmentName("gpu", 0), "gpu"},
		{SegmentName("workers", 12), "workers"},
		{"gpu", "gpu"},
		{"gpu-segment-", "gpu-segment-"},
		{"gpu-segment-1a", "gpu-segment-1a"},
		{SegmentName("gpu-segment-1", 2), "gpu-segment-1"},
	} {
		require.Equal(t, tc.group, GroupOf(tc.name), tc.name)
	}
	require.Equal(t, "gpu-segment-3", SegmentName("gpu", 3))
}

// Each group is visited once, at its first segment, in order.
func TestFirstOfEachGroup(t *testing.T) {
	specs := []rayv1.WorkerGroupSpec{{GroupName: SegmentName("gpu", 0)}, {GroupName: "cpu"}, {GroupName: SegmentName("gpu", 1)}, {GroupName: "gpu-segment-x"}}
	index, names := FirstOfEachGroup(specs)
	require.Equal(t, []int{0, 1, 3}, index)
	require.Equal(t, []string{"gpu", "cpu", "gpu-segment-x"}, names)
	index, names = FirstOfEachGroup(nil)
	require.Empty(t, index)
	require.Empty(t, names)
}
