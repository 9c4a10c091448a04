// Package defaultsched is the cluster's default scheduler (scheduler.kind:
// default): kube-scheduler places the pods one by one, through no queue;
// it owns no profile key.
package defaultsched

import "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"

// Kind is the scheduler.kind value that selects the default scheduler.
const Kind = "default"

// Integration is the default scheduler's.
type Integration struct{}

// Kind is "default".
func (Integration) Kind() string { return Kind }

// NeedsQueue: the default scheduler has no queue.
func (Integration) NeedsQueue() bool { return false }

// Validate has nothing to judge: the default scheduler reads no key of ours.
func (Integration) Validate(scheduler.Profile, scheduler.Reporter) {}
