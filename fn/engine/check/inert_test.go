package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Keys nrl-k8s declares and never applies are warned about, one warning
// per key set; the defaults warn about nothing.
func TestInert(t *testing.T) {
	const quiet = "workspace: {kind: rayUpload}\n"
	gpu := cluster(1, 8, "")
	for _, tc := range []struct {
		name, profile string
		want          []string
	}{
		{"defaults", quiet, nil},
		{"placement with GPU workers", quiet + gpu + "placement: {nodeSelector: {a: b}}", nil},
		{"placement without GPU workers", quiet + cluster(1, 0, "") + "placement: {tolerations: [{key: a}]}", []string{"warning p.yaml placement"}},
		{"affinity", quiet + gpu + "placement: {affinity: {nodeAffinity: {}}}", []string{"warning p.yaml placement.affinity"}},
		{"networking", quiet + "networking: {hostNetwork: true, nccl_net: IB, nccl_ib_disable: true, extra_env: {A: b}}",
			[]string{"warning p.yaml networking.hostNetwork", "warning p.yaml networking.nccl_ib_disable", "warning p.yaml networking.nccl_net", "warning p.yaml networking.extra_env"}},
		{"workspace", "workspace: {kind: pvc}", []string{"warning p.yaml workspace"}},
		{"rayVersion", quiet + "rayVersion: 2.49.0", []string{"warning p.yaml rayVersion"}},
		{"resources", quiet + "resources: {gym: {worker: {cpu: 2}}}", []string{"warning p.yaml resources.gym.worker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds diag.List
			inert(&ds, "p.yaml", infraOf(t, tc.profile))
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
