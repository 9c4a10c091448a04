// Package defaultsched is the cluster's default scheduler (scheduler.kind:
// default): kube-scheduler places the pods one by one, through no queue;
// it owns no profile key.
package defaultsched

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

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

// ProfileLabels: none.
func (Integration) ProfileLabels(scheduler.Profile) (map[string]string, []string, error) {
	return nil, nil, nil
}

// OwnerLabels: none.
func (Integration) OwnerLabels(scheduler.Profile) map[string]string { return nil }

// OwnerManagedBy: KubeRay on the cluster the run is applied to.
func (Integration) OwnerManagedBy(scheduler.Profile) string { return "" }

// OwnerAnnotations: none.
func (Integration) OwnerAnnotations(scheduler.Profile) map[string]string { return nil }

// Pod leaves the pod's schedulerName as the profile wrote it.
func (Integration) Pod(scheduler.Profile, string, *corev1.PodTemplateSpec) error { return nil }

// CheckObjects: nothing to judge.
func (Integration) CheckObjects(string, []any) diag.List { return nil }

// StatusReads: the default scheduler holds nothing but the pods.
func (Integration) StatusReads() []scheduler.StatusRead { return nil }

// CheckProfile: nothing of the profile's own beyond Validate.
func (Integration) CheckProfile(string, scheduler.Profile) diag.List { return nil }

// PreflightObject: no prerequisite object is its to judge.
func (Integration) PreflightObject(_ context.Context, _ scheduler.Reader, _ scheduler.PreflightRun, l scheduler.Line, _ *unstructured.Unstructured) (scheduler.Line, bool, error) {
	return l, false, nil
}

// PreflightAdmit: it admits no pod set (the pods go as rendered).
func (Integration) PreflightAdmit(_ context.Context, _ scheduler.Reader, run scheduler.PreflightRun) ([]scheduler.PodSet, error) {
	return run.Pods, nil
}
