package checkreport_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
)

// check says where each object of a run MultiKueue dispatches goes, as
// text and in -o json; a run on one cluster has no such section or key.
func TestDestinations(t *testing.T) {
	const run = "alice-raycluster-qwen3-30b-math-gb300"
	for _, tc := range []struct {
		name, profile string
		want          *checkreport.Destinations
		text          []string
	}{
		{name: "dispatched", profile: "tests/multicluster/testdata/multikueue.infra.yaml",
			want: &checkreport.Destinations{Manager: []string{"RayJob/" + run},
				Workers: []string{"ComputeDomain/compute-domain-" + run + "-training", "ResourceClaimTemplate/roce-" + run + "-training"}},
			text: []string{"\nDESTINATIONS (MultiKueue dispatches the run)\n", "\n  manager:      RayJob/" + run + "\n",
				"\n  every worker: ComputeDomain/compute-domain-" + run + "-training, ResourceClaimTemplate/roce-" + run + "-training\n"}},
		{name: "one cluster", profile: "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := renderPair(t, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml", tc.profile)
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags.Err())
			require.Equal(t, tc.want, checkreport.DestinationsOf(res.Docs))
			var text, js bytes.Buffer
			require.NoError(t, checkreport.Write(&text, res, checkreport.Options{Format: checkreport.Text}))
			require.NoError(t, checkreport.Write(&js, res, checkreport.Options{Format: checkreport.JSON}))
			var got struct {
				Destinations *checkreport.Destinations `json:"destinations"`
			}
			require.NoError(t, json.Unmarshal(js.Bytes(), &got))
			require.Equal(t, tc.want, got.Destinations)
			for _, s := range tc.text {
				require.Contains(t, text.String(), s)
			}
			if tc.want == nil {
				require.NotContains(t, text.String(), "DESTINATIONS")
			}
		})
	}
}
