package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// A run name renames every object the run owns; without one the profile's
// names stay, and a profile deployment is always shared.
func TestRunNaming(t *testing.T) {
	const prof = "image: prof-img\nkuberay: {generation: {name: gen}, training: {name: train}}\nlaunch: {rayjob: {name: job}}"
	for _, tc := range []struct {
		name    string
		profile string
		p       runparams.Run
		want    []string // cluster, DRA base, RayJob, cluster set, cluster instance, image
	}{
		{"unnamed", prof, runparams.Run{}, []string{"train", "train", "job", "train", "train", "prof-img"}},
		{"unnamed, no RayJob name", "kuberay: {training: {name: train}}", runparams.Run{}, []string{"train", "train", "train", "train", "train", ""}},
		{"unnamed, no training cluster", "kuberay: {generation: {name: gen}}", runparams.Run{}, []string{"", "", "", "gen", "gen", ""}},
		{"named", prof, runparams.Run{Name: "sweep", Image: "run-img"}, []string{"sweep-training", "sweep", "sweep", "sweep", "sweep", "run-img"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{in: infraOf(t, tc.profile), p: runparams.Params{Run: tc.p}}
			c := b.in.Kuberay.Training
			got := []string{"", "", ""}
			if c != nil {
				got = []string{b.clusterName("training", c), b.draBase(c), b.rayJobName(c)}
			}
			got = append(got, b.clusterSetName(), b.clusterIdentity().instance, b.image())
			require.Equal(t, tc.want, got)
		})
	}
}

// A shared deployment carries the run's labels only when rendered on its own.
func TestSharedIdentity(t *testing.T) {
	labels := map[string]string{"team": "rl"}
	for _, only := range []bool{false, true} {
		b := &builder{p: runparams.Params{Run: runparams.Run{User: "alice", RunID: "r1", Labels: labels, OnlyDeployments: only}}}
		id := b.sharedIdentity("sandbox")
		require.Equal(t, "sandbox", id.instance)
		require.Empty(t, id.runID, "a shared service has no run id")
		require.Equal(t, only, id.labels != nil, "OnlyDeployments=%v", only)
	}
}
