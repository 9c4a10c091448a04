package capacity

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// SegmentName is the name of segment i of worker group base, as
// kuberay.<role>.segmentSize splits a group (fn/engine/manifest).
func SegmentName(base string, i int64) string { return fmt.Sprintf("%s-segment-%d", base, i) }

// GroupOf is the worker group a segment was split from (name itself when
// it is none), so a finding about a group is said once for its segments.
func GroupOf(name string) string { return segmentSuffix().ReplaceAllString(name, "") }

var segmentSuffix = lazyre.New(`-segment-[0-9]+$`)
