package check

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// An output credential is named by object and field, never by value; an
// environment read into a raycluster manifest is an error under a
// credential name and a warning otherwise.
func TestSecrets(t *testing.T) {
	const token = "s3cr3t-value"
	for _, tc := range []struct {
		name string
		rule func(t *testing.T) diag.List
		want []string
	}{
		{"literal credential in output", func(t *testing.T) diag.List {
			return Secrets("p.yaml", []rendered.Doc{docOf(t, "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, env: [{name: HF_TOKEN, value: "+token+"}]}]}")})
		}, []string{"error p.yaml output Pod/p.spec.containers[0].env[0].value (HF_TOKEN)"}},
		{"reference in output", func(t *testing.T) diag.List {
			return Secrets("p.yaml", []rendered.Doc{docOf(t, "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}]}]}")})
		}, nil},
		{"host env in raycluster mode", func(*testing.T) diag.List {
			var ds diag.List
			hostEnv(&ds, "p.yaml", &profile.Loaded{HostEnv: []string{"HF_TOKEN", "HOME_DIR"}}, runparams.RayCluster)
			return ds
		}, []string{"error p.yaml launch.env.HF_TOKEN", "warning p.yaml launch.env.HOME_DIR"}},
		{"host env in rayjob mode", func(*testing.T) diag.List {
			var ds diag.List
			hostEnv(&ds, "p.yaml", &profile.Loaded{HostEnv: []string{"HF_TOKEN"}}, runparams.RayJob)
			return ds
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.rule(t)
			require.Equal(t, tc.want, found(ds), "%v", ds)
			require.NotContains(t, fmt.Sprint(ds), token)
		})
	}
}
