// Package kai says how KAI Scheduler groups a RayJob's or RayCluster's pods
// into gangs, as KAI's own pod-grouper does it, so check can say which pods
// are scheduled all-or-nothing and which sets of pods each topology
// constraint keeps together.
//
// The model restates kai-scheduler/KAI-Scheduler (read at d5bc503a; its Go
// module is not available to this build):
//   - pkg/podgrouper/podgrouper/plugins/ray/ray_grouper.go: one PodGroup
//     per top owner (the RayJob of a RayJob's cluster, else the RayCluster),
//     minMember 1 (the head) + Σ over worker groups that are not empty of
//     (minReplicas if set, else replicas) × numOfHosts (it skips a group
//     whose "suspended" is true, a field KubeRay's CRD does not have);
//     a SubGroup "headgroup" (minMember 1) and one per such worker group
//     (named groupName, else worker-group-<i>), each with the topology
//     constraint of its own pod template's annotations (kai.scheduler/topology
//     plus topology-required-placement or -preferred-placement; the topology
//     alone makes none, a placement without it is an error);
//   - pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go:
//     the PodGroup's own constraint from the top owner's annotations (the
//     same three keys), which binds every pod of the gang, head included.
package kai

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// TopologyKeys are the annotation keys of a topology constraint, in the
// order KAI reads them.
func TopologyKeys() []string {
	return []string{vocab.KAITopologyAnnotation, vocab.KAIRequiredPlacementAnnotation, vocab.KAIPreferredPlacementAnnotation}
}

// Constraint is a topology constraint: the topology and the level its pods
// must (Required) or should (Preferred) share.
type Constraint struct {
	Topology, Required, Preferred string
}

// None reports an empty constraint.
func (c Constraint) None() bool { return c.Required == "" && c.Preferred == "" }

// String is how check prints it.
func (c Constraint) String() string {
	switch {
	case c.Required != "":
		return fmt.Sprintf("required %s (topology %s)", c.Required, c.Topology)
	case c.Preferred != "":
		return fmt.Sprintf("preferred %s (topology %s)", c.Preferred, c.Topology)
	}
	return "none"
}

// SubGroup is one worker group's (or the head's) part of the gang.
type SubGroup struct {
	Name string
	// Index is the worker group's index (-1 for the head).
	Index     int
	MinMember int64
	Topology  Constraint
}

// PodGroup is the gang KAI makes of one RayCluster's pods.
type PodGroup struct {
	MinMember int64
	Topology  Constraint
	SubGroups []SubGroup
}

// Group is the PodGroup of a RayCluster spec owned by an object with the
// given annotations (the RayJob, or the RayCluster itself). An error is what
// KAI's grouper would fail on (a placement without a topology).
func Group(ownerAnnotations map[string]string, spec *rayv1.RayClusterSpec) (PodGroup, error) {
	top, err := constraint(ownerAnnotations, "the object's metadata.annotations")
	if err != nil {
		return PodGroup{}, err
	}
	head, err := constraint(spec.HeadGroupSpec.Template.Annotations, "headGroupSpec.template.metadata.annotations")
	if err != nil {
		return PodGroup{}, err
	}
	pg := PodGroup{MinMember: 1, Topology: top, SubGroups: []SubGroup{{Name: vocab.RayHeadGroup, Index: -1, MinMember: 1, Topology: head}}}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		// KAI skips a group whose "suspended" field is true; KubeRay's
		// field is "suspend", so a suspended group still counts.
		var desired, minimum int64
		if g.Replicas != nil {
			desired = int64(*g.Replicas)
		}
		if g.MinReplicas != nil {
			minimum = int64(*g.MinReplicas)
		}
		if desired == 0 && minimum == 0 {
			continue
		}
		hosts := int64(g.NumOfHosts)
		if hosts == 0 {
			hosts = 1 // the CRD's default, which KAI assumes when unset
		}
		n := desired * hosts
		if minimum > 0 {
			n = minimum * hosts
		}
		name := g.GroupName
		if name == "" {
			name = fmt.Sprintf("worker-group-%d", i)
		}
		c, err := constraint(g.Template.Annotations, fmt.Sprintf("workerGroupSpecs[%d].template.metadata.annotations", i))
		if err != nil {
			return PodGroup{}, err
		}
		pg.MinMember += n
		pg.SubGroups = append(pg.SubGroups, SubGroup{Name: name, Index: i, MinMember: n, Topology: c})
	}
	return pg, nil
}

func constraint(a map[string]string, where string) (Constraint, error) {
	c := Constraint{Topology: a[vocab.KAITopologyAnnotation], Required: a[vocab.KAIRequiredPlacementAnnotation], Preferred: a[vocab.KAIPreferredPlacementAnnotation]}
	if c.None() {
		return Constraint{}, nil
	}
	if c.Topology == "" {
		return Constraint{}, fmt.Errorf("%s: %s or %s without %s; KAI's pod-grouper refuses a placement without a topology", where, vocab.KAIRequiredPlacementAnnotation, vocab.KAIPreferredPlacementAnnotation, vocab.KAITopologyAnnotation)
	}
	return c, nil
}

// KeptTogether reports whether some constraint keeps every worker group in
// groups (indices) in one domain at a required level: the PodGroup's own,
// or one subgroup's when groups is that one group.
func (pg PodGroup) KeptTogether(groups []int) bool {
	if pg.Topology.Required != "" {
		return true
	}
	if len(groups) != 1 {
		return false
	}
	for _, sg := range pg.SubGroups {
		if sg.Index == groups[0] {
			return sg.Topology.Required != ""
		}
	}
	return false
}

// GangOf is how a Ray cluster's pods are scheduled together: when any of
// its pod templates names kai-scheduler, KAI places them as the PodGroup
// Group makes (all or nothing, in the domains its constraints require) and
// ok is true; otherwise the scheduler they name places them pod by pod.
// check reports it and preflight places it: one rule for both.
func GangOf(ownerAnnotations map[string]string, spec *rayv1.RayClusterSpec) (pg PodGroup, ok bool, err error) {
	ok = spec.HeadGroupSpec.Template.Spec.SchedulerName == vocab.KAISchedulerName
	for i := range spec.WorkerGroupSpecs {
		ok = ok || spec.WorkerGroupSpecs[i].Template.Spec.SchedulerName == vocab.KAISchedulerName
	}
	if !ok {
		return PodGroup{}, false, nil
	}
	pg, err = Group(ownerAnnotations, spec)
	return pg, true, err
}
