package profile_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// `nrl-k8s schema profile -o FORMAT` prints one of the two generated
// references, and names the formats it knows otherwise.
func TestReference(t *testing.T) {
	js, err := profile.SchemaJSON()
	require.NoError(t, err)
	md, err := profile.Markdown()
	require.NoError(t, err)
	for format, want := range map[string]string{"json": string(js), "markdown": md} {
		got, err := profile.Reference(format)
		require.NoError(t, err)
		require.Equal(t, want, string(got), format)
	}
	_, err = profile.Reference("yaml")
	require.EqualError(t, err, "-o yaml: expected json or markdown")
}
