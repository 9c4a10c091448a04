package check

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// InfiniBand has no default class or count: a worker claiming it needs
// both, from the profile or the cluster's own dra.
func TestDRASettings(t *testing.T) {
	const ib = "kuberay:\n  training:\n    spec: {workerGroupSpecs: [{groupName: g, template: {spec: {resourceClaims: [{name: %s}]}}}]}\n"
	for _, tc := range []struct {
		name, profile string
		want          []string
	}{
		{"claim, no settings", fmt.Sprintf(ib, "infiniband-channel"), []string{"error p.yaml dra.infiniband.deviceClassName", "error p.yaml dra.infiniband.count"}},
		{"claim, class only", fmt.Sprintf(ib, "infiniband-channel") + "dra: {infiniband: {deviceClassName: ib.example.com}}", []string{"error p.yaml dra.infiniband.count"}},
		{"claim, profile settings", fmt.Sprintf(ib, "infiniband-channel") + "dra: {infiniband: {deviceClassName: ib.example.com, count: 4}}", nil},
		{"claim, cluster settings", fmt.Sprintf(ib, "infiniband-channel") + "    dra: {infiniband: {deviceClassName: ib.example.com, count: 4}}", nil},
		{"another claim", fmt.Sprintf(ib, "roce-channel"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infraOf(t, tc.profile)
			var ds diag.List
			draSettings(&ds, "p.yaml", in, profile.RoleCluster{Role: "training", Cluster: in.Kuberay.Training})
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
