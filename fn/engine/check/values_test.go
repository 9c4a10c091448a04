package check

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// A count of another type or below 1 is one error naming the key and what
// set it, however often it is read; values the pod fills in are unknown,
// not wrong.
func TestRecipeCounts(t *testing.T) {
	for _, tc := range []struct {
		name, recipe string
		overrides    []string
		clusterOK    bool
		want         []string
	}{
		{"sound", "cluster: {num_nodes: 2, gpus_per_node: 8}", nil, true, nil},
		{"a string", "cluster: {num_nodes: two, gpus_per_node: 8}", nil, false, []string{"error r.yaml cluster.num_nodes"}},
		{"zero", "cluster: {num_nodes: 2, gpus_per_node: 0}", nil, false, []string{"error r.yaml cluster.gpus_per_node"}},
		{"a float", "cluster: {num_nodes: 1.5, gpus_per_node: 8}", nil, false, []string{"error r.yaml cluster.num_nodes"}},
		{"left for the pod", "cluster: {num_nodes: '${oc.env:N}', gpus_per_node: null}", nil, true, nil},
		{"set by the pod's shell", "cluster: {num_nodes: bad, gpus_per_node: 8}", []string{"run:cluster.num_nodes=$N"}, true, nil},
		{"bad twice, told once", "cluster: {num_nodes: -1, gpus_per_node: 8}\nsft: {}\npolicy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 1, context_parallel_size: 1}}",
			nil, false, []string{"error r.yaml cluster.num_nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds diag.List
			ok := recipeCounts(&ds, infraOf(t, "{}"), recipeOf(t, tc.recipe, tc.overrides...))
			require.Equal(t, tc.clusterOK, ok)
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}

func TestNVLinkAcrossNodes(t *testing.T) {
	claim := "    spec:\n      workerGroupSpecs: [{groupName: g, template: {spec: {resourceClaims: [{name: %s}]}}}]\n"
	for name, tc := range map[string]struct {
		profile string
		want    bool
	}{
		"no training cluster":   {"{}", false},
		"ComputeDomain claimed": {"kuberay:\n  training:\n" + fmt.Sprintf(claim, "compute-domain-channel"), true},
		"another claim":         {"kuberay:\n  training:\n" + fmt.Sprintf(claim, "roce-channel"), false},
	} {
		require.Equal(t, tc.want, nvlinkAcrossNodes(infraOf(t, tc.profile)), name)
	}
}
