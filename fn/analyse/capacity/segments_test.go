package capacity

import (
	"testing"

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
