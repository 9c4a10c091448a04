package runparams_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
)

func TestNormalizeUser(t *testing.T) {
	for in, want := range map[string]string{
		"Bob_Smith.Jr": "bob-smith-jr",
		" alice ":      "alice",
		"":             "",
	} {
		require.Equal(t, want, runparams.NormalizeUser(in), "%q", in)
	}
}
