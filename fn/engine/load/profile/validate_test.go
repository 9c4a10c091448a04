package profile_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The RayJob's int32 second counts are bounded where they are read: a
// larger value would wrap to another deadline in the rendered object.
func TestRayJobSecondsFitInt32(t *testing.T) {
	file := filepath.Join(testenv.RepoRoot(t), "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml")
	for _, tc := range []struct{ override, want string }{
		{"launch.rayjob.activeDeadlineSeconds=4294967297", `launch.rayjob.activeDeadlineSeconds: set by override "infra.launch.rayjob.activeDeadlineSeconds=4294967297": found 4294967297; expected at most 2147483647 seconds`},
		{"launch.rayjob.ttlSecondsAfterFinished=4294967297", `launch.rayjob.ttlSecondsAfterFinished: set by override "infra.launch.rayjob.ttlSecondsAfterFinished=4294967297": found 4294967297; expected 0 to 2147483647 seconds`},
		{"launch.rayjob.activeDeadlineSeconds=2147483647", ""},
	} {
		t.Run(tc.override, func(t *testing.T) {
			_, ds := profile.Load(profile.Input{Loader: recipe.NewLoader(source.Disk{}), File: file, User: "alice", Overrides: []string{tc.override}})
			if tc.want == "" {
				require.False(t, ds.HasErrors(), "%v", ds)
				return
			}
			require.True(t, ds.HasErrors())
			require.Contains(t, ds.Err().Error(), tc.want)
		})
	}
}
