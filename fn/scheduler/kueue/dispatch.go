package kueue

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// Admission is Kueue's (the package's Admission).
func (Integration) Admission(p scheduler.Profile) (queue string, priority *string, ok bool) {
	return Admission(p)
}

// DispatchModes are the values dispatch accepts.
func (Integration) DispatchModes() []string { return DispatchModes }

// Dispatchable refuses a MultiKueue run that MultiKueue cannot dispatch
// whole: it copies each object Kueue admits, alone, to whichever worker
// admits it, and every other object goes to every worker
// (rendered.Destinations). So the run is one RayJob that creates its own
// cluster (rayjob mode), or one RayCluster with nothing submitted to it.
func (Integration) Dispatchable(p scheduler.Profile, mode runparams.Mode, objs []any) error {
	if !MultiKueue(p) {
		return nil
	}
	d, field := Dispatch(p)
	refuse := func(why string) error {
		return scheduler.Errorf(field, "is %s but %s; expected rayjob mode (one RayJob that creates its own cluster), or a profile without %s", *d, why, field)
	}
	if mode == runparams.Dev {
		return refuse("dev mode renders a Pod, which Kueue does not admit and MultiKueue does not dispatch")
	}
	var clusters []string
	for _, o := range objs {
		switch v := o.(type) {
		case *rayv1.RayJob:
			if len(v.Spec.ClusterSelector) > 0 {
				return refuse(fmt.Sprintf("RayJob %s is submitted to an existing RayCluster by clusterSelector: it is not Kueue's to dispatch, so it would go to every worker and wait there for a cluster that runs on one", v.Name))
			}
		case *rayv1.RayCluster:
			clusters = append(clusters, v.Name)
		}
	}
	if len(clusters) > 1 {
		return refuse(fmt.Sprintf("%s mode renders %d RayClusters (%s), which MultiKueue dispatches each on its own, to whichever worker admits it", mode, len(clusters), strings.Join(clusters, ", ")))
	}
	return nil
}
