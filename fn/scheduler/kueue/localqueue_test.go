package kueue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// Every branch of a quota note says what the run needs first, then what is
// free (or why that cannot be said), in one wording.
func TestQuotaNoteWording(t *testing.T) {
	quota := func(nominal, reserved string) map[corev1.ResourceName]flavorQuota {
		return map[corev1.ResourceName]flavorQuota{gpu: {nominal: resource.MustParse(nominal), reserved: resource.MustParse(reserved)}}
	}
	cases := []struct {
		name   string
		cohort string
		quota  map[corev1.ResourceName]flavorQuota
		want   string
		state  scheduler.State
		waits  bool
	}{
		{"fits", "", quota("32", "8"), "needs 16 nvidia.com/gpu; 24 of 32 free", scheduler.OK, false},
		{"waits for quota", "", quota("32", "24"), "needs 16 nvidia.com/gpu; 8 of 32 free", scheduler.OK, true},
		{"over-reserved reads as none free", "", quota("16", "20"), "needs 16 nvidia.com/gpu; 0 of 16 free", scheduler.OK, true},
		{"more than the whole quota, no cohort", "", quota("8", "0"),
			"needs 16 nvidia.com/gpu; 8 of 8 free: more than the whole nominal quota, and ClusterQueue cq is in no cohort to borrow from: Kueue never admits it", scheduler.Missing, false},
		{"more than the whole quota in a cohort: may borrow", "co", quota("8", "0"), "needs 16 nvidia.com/gpu; 8 of 8 free", scheduler.OK, true},
		{"not covered", "", map[corev1.ResourceName]flavorQuota{},
			"needs 16 nvidia.com/gpu; none covered: Kueue never admits it; expected nvidia.com/gpu among a resource group's coveredResources", scheduler.Missing, false},
		{"a value that is no quantity", "", map[corev1.ResourceName]flavorQuota{gpu: {invalid: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota is negative"}},
			"needs 16 nvidia.com/gpu; cannot tell what is free: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota is negative", scheduler.CannotTell, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state, note, waits := quotaNote("cq", tc.cohort, gpu, resource.MustParse("16"), tc.quota)
			assert.Equal(t, tc.want, note)
			assert.Equal(t, tc.state, state)
			assert.Equal(t, tc.waits, waits)
		})
	}
}
