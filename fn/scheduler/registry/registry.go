// Package registry lists the scheduler integrations (fn/scheduler), in
// the order scheduler.kind's enumeration names them and their keys are
// judged: adding a scheduler is its folder and one line here.
package registry

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/defaultsched"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
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

// ProfileLabels is what every integration adds to the profile's labels
// and the keys they drop from every label set, in registry order; the
// first contradiction is the error.
func ProfileLabels(p scheduler.Profile) (set map[string]string, drop []string, err error) {
	for _, s := range All() {
		add, d, err := s.ProfileLabels(p)
		if err != nil {
			return nil, nil, err
		}
		set, drop = merge(set, add), append(drop, d...)
	}
	return set, drop, nil
}

// OwnerLabels are every integration's labels on the object it admits or
// groups.
func OwnerLabels(p scheduler.Profile) map[string]string {
	var out map[string]string
	for _, s := range All() {
		out = merge(out, s.OwnerLabels(p))
	}
	return out
}

// OwnerAnnotations are every integration's annotations on that object.
func OwnerAnnotations(p scheduler.Profile) map[string]string {
	var out map[string]string
	for _, s := range All() {
		out = merge(out, s.OwnerAnnotations(p))
	}
	return out
}

// OwnerManagedBy is the spec.managedBy of the object a queueing
// controller admits: the first integration's that sets one ("" for none).
func OwnerManagedBy(p scheduler.Profile) string {
	for _, s := range All() {
		if by := s.OwnerManagedBy(p); by != "" {
			return by
		}
	}
	return ""
}

// Pod applies every integration to one pod template, in registry order.
func Pod(p scheduler.Profile, field string, t *corev1.PodTemplateSpec) error {
	for _, s := range All() {
		if err := s.Pod(p, field, t); err != nil {
			return err
		}
	}
	return nil
}

// merge is a with b's entries (a new map when b adds any; nil stays nil).
func merge(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// CheckObjects is every integration's judgement of the built objects, in
// registry order.
func CheckObjects(file string, objs []any) diag.List {
	var ds diag.List
	for _, s := range All() {
		ds = append(ds, s.CheckObjects(file, objs)...)
	}
	return ds
}

// CheckProfile is every integration's word on the profile's own labels
// and pod templates, in registry order.
func CheckProfile(file string, p scheduler.Profile) diag.List {
	var ds diag.List
	for _, s := range All() {
		ds = append(ds, s.CheckProfile(file, p)...)
	}
	return ds
}

// StatusReads are every integration's status reads, by API group and
// resource: the order of their lines (a refused list's Problem among them)
// never depends on the registry's.
func StatusReads() []scheduler.StatusRead {
	var out []scheduler.StatusRead
	for _, s := range All() {
		out = append(out, s.StatusReads()...)
	}
	slices.SortStableFunc(out, func(a, b scheduler.StatusRead) int {
		return strings.Compare(a.Resource.Group+"/"+a.Resource.Resource, b.Resource.Group+"/"+b.Resource.Resource)
	})
	return out
}

// PreflightObject is the judgement of a found prerequisite object by the
// first integration that owns it; ok false when none does.
func PreflightObject(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun, l scheduler.Line, u *unstructured.Unstructured) (scheduler.Line, bool, error) {
	for _, s := range All() {
		if out, ok, err := s.PreflightObject(ctx, r, run, l, u); ok || err != nil {
			return out, ok, err
		}
	}
	return l, false, nil
}

// PreflightAdmit is the run's pod sets as every integration admits them,
// in registry order.
func PreflightAdmit(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun) ([]scheduler.PodSet, error) {
	for _, s := range All() {
		pods, err := s.PreflightAdmit(ctx, r, run)
		if err != nil {
			return nil, err
		}
		run.Pods = pods
	}
	return run.Pods, nil
}

// Admission is the queue and priority class of the object a queueing
// integration admits (the first that does); ok false when none does.
func Admission(p scheduler.Profile) (queue string, priority *string, ok bool) {
	for _, s := range All() {
		if a, is := s.(scheduler.Admitter); is {
			if queue, priority, ok = a.Admission(p); ok {
				return queue, priority, true
			}
		}
	}
	return "", nil, false
}

// AdmissionKeys are where p names a queueing integration's admission: the
// keys of the one p selects or names beside another, else the first's
// (zero when none is registered).
func AdmissionKeys(p scheduler.Profile) scheduler.AdmissionKeys {
	var first *scheduler.AdmissionKeys
	for _, s := range All() {
		if a, is := s.(scheduler.Admitter); is {
			k := a.AdmissionKeys(p)
			if k.Selected || k.Beside {
				return k
			}
			if first == nil {
				first = &k
			}
		}
	}
	if first == nil {
		return scheduler.AdmissionKeys{}
	}
	return *first
}

// DispatchModes are every dispatch value the queueing integrations accept.
func DispatchModes() []string {
	var out []string
	for _, s := range All() {
		if a, is := s.(scheduler.Admitter); is {
			out = append(out, a.DispatchModes()...)
		}
	}
	return out
}

// Dispatchable is the first refusal of a build a queueing integration
// cannot send whole to another cluster (nil: none refuses).
func Dispatchable(p scheduler.Profile, mode runparams.Mode, objs []any) error {
	for _, s := range All() {
		if a, is := s.(scheduler.Admitter); is {
			if err := a.Dispatchable(p, mode, objs); err != nil {
				return err
			}
		}
	}
	return nil
}

// PreflightDispatch is the manager's dispatch setup as every integration
// that dispatches judges it: their lines in registry order, and the
// workers as the first that names any says them.
func PreflightDispatch(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun) (scheduler.Workers, []scheduler.Line, error) {
	var workers scheduler.Workers
	var lines []scheduler.Line
	for _, s := range All() {
		if d, is := s.(scheduler.Dispatcher); is {
			w, more, err := d.PreflightDispatch(ctx, r, run)
			if err != nil {
				return scheduler.Workers{}, nil, err
			}
			lines = append(lines, more...)
			if !workers.Known {
				workers = w
			}
		}
	}
	return workers, lines, nil
}
