// Package registry lists the scheduler integrations (fn/scheduler), in
// the order scheduler.kind's enumeration names them and their keys are
// judged: adding a scheduler is its folder and one line here.
package registry

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/defaultsched"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
)

// All is every integration, in enumeration order.
func All() []scheduler.Integration {
	return []scheduler.Integration{kai.Integration{}, kueue.Integration{}, defaultsched.Integration{}}
}

// Kinds is every scheduler.kind value, in enumeration order.
func Kinds() []string {
	all := All()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Kind()
	}
	return out
}

// Of is the integration kind selects; ok is false for an unknown kind.
func Of(kind string) (scheduler.Integration, bool) {
	for _, s := range All() {
		if s.Kind() == kind {
			return s, true
		}
	}
	return nil, false
}

// Validate judges the profile's scheduler keys: scheduler.queue when the
// selected integration needs one, then every integration's own keys, in
// enumeration order (each refuses its keys under another kind).
func Validate(p scheduler.Profile, r scheduler.Reporter) {
	if s, ok := Of(p.Kind); ok && s.NeedsQueue() && !p.QueueSet() {
		r.Errorf("scheduler.queue", "infra.scheduler.queue is required when scheduler.kind=%s", p.Kind)
	}
	for _, s := range All() {
		s.Validate(p, r)
	}
}
