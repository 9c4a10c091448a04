package shortlived

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tune sets the pacing and the limit unless the environment names them.
func TestTune(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })
	for _, tc := range []struct {
		name    string
		env     map[string]string
		percent int
		limit   int64
	}{
		{name: "defaults", percent: gcPercent, limit: memoryLimit},
		{name: "GOGC and GOMEMLIMIT win", env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}, percent: 100, limit: 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
				t.Setenv(k, "")
				require.NoError(t, os.Unsetenv(k))
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(1 << 30)
			Tune()
			require.Equal(t, tc.percent, debug.SetGCPercent(100))
			require.Equal(t, tc.limit, debug.SetMemoryLimit(-1))
		})
	}
}
