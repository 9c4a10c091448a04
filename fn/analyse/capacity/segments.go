package capacity

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// SegmentName is the name of segment i of worker group base, as
// kuberay.<role>.segmentSize splits a group (fn/engine/manifest).
func SegmentName(base string, i int64) string { return fmt.Sprintf("%s-segment-%d", base, i) }

// GroupOf is the worker group a segment was split from (name itself when
// it is none), so a finding about a group is said once for its segments.
func GroupOf(name string) string { return segmentSuffix().ReplaceAllString(name, "") }

var segmentSuffix = lazyre.New(`-segment-[0-9]+$`)

// FirstOfEachGroup is, in order, the index of the first worker group spec
// of each group (segments folded by GroupOf) and the group's name: what a
// finding said once per group reads.
func FirstOfEachGroup(specs []rayv1.WorkerGroupSpec) (index []int, name []string) {
	seen := map[string]bool{}
	for i := range specs {
		g := GroupOf(specs[i].GroupName)
		if !seen[g] {
			seen[g] = true
			index, name = append(index, i), append(name, g)
		}
	}
	return index, name
}
