package manifest

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	schedkueue "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
)

// managedBy is spec.managedBy of the object a queueing controller admits,
// as the scheduler integrations say (nil: KubeRay's own).
func managedBy(in *profile.Infra) *string {
	if by := registry.OwnerManagedBy(in.Scheduler.View()); by != "" {
		return &by
	}
	return nil
}

// dispatchable refuses a MultiKueue run that MultiKueue cannot dispatch
// whole: it copies each object Kueue admits, alone, to whichever worker
// admits it, and every other object goes to every worker
// (rendered.Destinations). So the run is one RayJob that creates its own
// cluster (rayjob mode), or one RayCluster with nothing submitted to it.
func dispatchable(in *profile.Infra, mode runparams.Mode, objs []any) error {
	view := in.Scheduler.View()
	if !schedkueue.MultiKueue(view) {
		return nil
	}
	d, field := schedkueue.Dispatch(view)
	refuse := func(why string) error {
		return errAt(field, "is %s but %s; expected rayjob mode (one RayJob that creates its own cluster), or a profile without %s", *d, why, field)
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
