// Package scheduler is what a scheduler integration is: the interface each
// scheduler the profile's scheduler.kind selects (KAI, Kueue, the
// cluster's default) implements in a folder of its own under fn/scheduler,
// and the plain view of the profile's keys it reads. The integrations sit
// just above the analysers (they may import only fn/support, the run
// parameters, rendered documents, typed API objects and fn/analyse), so
// every stage can call them; fn/scheduler/registry lists them.
package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Integration is one scheduler, everything it means in one folder. Each
// integration owns some of the profile's scheduler keys and judges them
// whichever kind the profile selects (a key of KAI's set under kind kueue
// is KAI's to refuse), so a new scheduler is one folder and one line in
// the registry.
type Integration interface {
	// Kind is the scheduler.kind value that selects it.
	Kind() string
	// NeedsQueue reports whether scheduler.queue is required when it is
	// selected.
	NeedsQueue() bool
	// Validate reports what it refuses of the keys it owns.
	Validate(p Profile, r Reporter)

	// What the render writes (fn/engine/manifest), each part nil when the
	// profile does not call on this scheduler:
	//
	// ProfileLabels are the labels it adds to the profile's own (every
	// object and pod template) and the label keys it drops from every
	// label set of the profile; a profile label that contradicts it is a
	// *FieldError.
	ProfileLabels(p Profile) (set map[string]string, drop []string, err error)
	// OwnerLabels and OwnerAnnotations go on the object it admits or
	// groups: the RayJob, or each RayCluster in raycluster mode.
	OwnerLabels(p Profile) map[string]string
	OwnerAnnotations(p Profile) map[string]string
	// Pod applies it to one pod template (at field, for errors).
	Pod(p Profile, field string, t *corev1.PodTemplateSpec) error

	// OwnerManagedBy is the spec.managedBy of that object: "" leaves it
	// to KubeRay on the cluster it is applied to.
	OwnerManagedBy(p Profile) string

	// CheckObjects is what it refuses or says of the objects a build made
	// (typed, as fn/engine/manifest returns them), at check's Objects gate,
	// whichever kind is selected: after check's own findings of them, in
	// registry order. Every entry point prints findings sorted by severity,
	// file and field (diag.List.Sorted), so that order shows only among
	// findings at one field.
	CheckObjects(file string, objs []any) diag.List
	// CheckProfile is what it says of the profile's own labels and pod
	// templates, at check's Inputs gate.
	CheckProfile(file string, p Profile) diag.List

	// StatusReads are what the status command lists for it and how it
	// reads each object (status.go).
	StatusReads() []StatusRead

	// What preflight reads of the cluster for it (preflight.go).
	Preflighter
}

// FieldError is a profile setting that contradicts what the scheduler
// writes, at the field path that says it.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Errorf is a *FieldError at field.
func Errorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Reporter takes an error at a profile field path.
type Reporter interface {
	Errorf(field, format string, args ...any)
}

// Profile is what an integration reads of a profile: its scheduler: keys
// and the few other keys they meet, as plain data (fn/engine/load/profile
// decodes the profile and hands this view on).
type Profile struct {
	Kind  string
	Queue *string
	// PriorityClassName is every Ray pod's PriorityClass.
	PriorityClassName *string
	// WorkloadPriorityClass is Kueue's, under kind kueue.
	WorkloadPriorityClass *string
	// Topology is KAI's run-wide topology constraint.
	Topology *Topology
	// Dispatch is scheduler.dispatch: how Kueue's admitted object reaches
	// a cluster, under kind kueue.
	Dispatch *string
	// Kueue is Kueue's admission beside KAI's placement (kind kai).
	Kueue *KueueBeside
	// Labels and Annotations are the profile's own; Clusters each kuberay
	// role's, in role order; Deployments each deployment's, in name order.
	Labels      map[string]string
	Annotations map[string]string
	Clusters    []Part
	Deployments []Part
	// NamesKAI: a pod template of the profile names KAI's scheduler itself.
	NamesKAI bool
	// Suspend is launch.rayjob.suspend.
	Suspend bool
}

// Topology is scheduler.topology.
type Topology struct {
	Topology, RequiredPlacement, PreferredPlacement string
}

// KueueBeside is scheduler.kueue: the LocalQueue and WorkloadPriorityClass
// of the object Kueue admits while KAI places its pods.
type KueueBeside struct {
	Queue                 string
	WorkloadPriorityClass *string
	Dispatch              *string
}

// Part is one kuberay role's cluster (Name is the role) or one
// deployment's metadata.
type Part struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Templates are a cluster's pod templates, head first.
	Templates []Template
}

// Template is one pod template of the profile at its field path.
type Template struct {
	Field string
	Pod   *corev1.PodTemplateSpec
}

// NameOf is the scheduler a pod goes to.
func NameOf(spec *corev1.PodSpec) string {
	if spec.SchedulerName == "" {
		return corev1.DefaultSchedulerName
	}
	return spec.SchedulerName
}

// QueueSet reports a non-empty scheduler.queue.
func (p Profile) QueueSet() bool { return p.Queue != nil && *p.Queue != "" }

// Admitter is an integration that admits the run's object through a queue
// of its own (Kueue), however the profile names it.
type Admitter interface {
	// Admission is the queue and priority class of the object it admits;
	// ok is false when the profile does not call on it.
	Admission(p Profile) (queue string, priority *string, ok bool)
	// AdmissionKeys are the profile keys that name that queue and
	// priority class under p's kind, and how p calls on it: what the
	// chart's queue knobs set (fn/frontend/chartgen).
	AdmissionKeys(p Profile) AdmissionKeys
	// DispatchModes are the values its dispatch key accepts.
	DispatchModes() []string
	// Dispatchable refuses a build it cannot send whole to another
	// cluster (MultiKueue), a *FieldError at the key that asks for it.
	Dispatchable(p Profile, mode runparams.Mode, objs []any) error
}

// AdmissionKeys is where a profile names an Admitter's admission.
type AdmissionKeys struct {
	// Queue and PriorityClass are the keys' field paths.
	Queue, PriorityClass string
	// Selected: scheduler.kind selects it, so it admits alone. Beside:
	// another kind places the pods and a block of its own names its queue.
	Selected, Beside bool
}
