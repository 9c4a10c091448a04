package placement

import (
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Gang is how KAI schedules one Ray cluster's pods (kai.GangOf): check
// reports it and preflight places it, from this one computation.
type Gang struct {
	PodGroup kai.PodGroup
	// Err is what KAI's pod-grouper fails on: no gang is made, and the
	// pods are placed on their own.
	Err error
}

// Gangs is, per Ray cluster whose pods name KAI, its gang, keyed
// "namespace/Kind/name" (ns for a cluster without a namespace).
func Gangs(clusters []workload.Cluster, ns string) map[string]Gang {
	out := map[string]Gang{}
	for _, c := range clusters {
		pg, isKAI, err := kai.GangOf(c.Annotations, c.Spec)
		if !isKAI {
			continue
		}
		out[Key(c.Namespace, c.Object, ns)] = Gang{PodGroup: pg, Err: err}
	}
	return out
}

// Key is how runs and gangs are keyed: "namespace/Kind/name", ns when the
// object has no namespace.
func Key(namespace, object, ns string) string {
	if namespace == "" {
		namespace = ns
	}
	return namespace + "/" + object
}

// RunsOf groups pod sets into runs, one per object, in input order: a
// RayJob's or RayCluster's head and worker groups are KAI's gang when gangs
// holds one for it (without an error), with the PodGroup's and each
// subgroup's required level and minMember; every other pod set (a
// submitter, a Deployment's) is placed on its own. index[i] is the
// position in shapes of each of run i's shapes.
func RunsOf(shapes []Shape, gangs map[string]Gang) (runs []Run, index [][]int) {
	at := map[string]int{}
	for k, s := range shapes {
		key := Key(s.Namespace, s.Object, "")
		g, gang := gangs[key]
		ray := s.Role == "head" || strings.HasPrefix(s.Role, "worker group ")
		inGang := gang && g.Err == nil && ray
		if !ray {
			key += " " + s.Role
		}
		i, seen := at[key]
		if !seen {
			i = len(runs)
			at[key] = i
			r := Run{Name: s.Object}
			if inGang {
				r.Gang, r.PodGroup, r.Required = true, g.PodGroup, g.PodGroup.Topology.Required
			}
			runs, index = append(runs, r), append(index, nil)
		}
		if inGang {
			s.MinMember, s.Required = subgroupOf(g.PodGroup, s.Role)
		}
		runs[i].Shapes = append(runs[i].Shapes, s)
		index[i] = append(index[i], k)
	}
	return runs, index
}

// subgroupOf is the minMember and required level of the KAI subgroup a
// pod set belongs to.
func subgroupOf(pg kai.PodGroup, role string) (int64, string) {
	name := vocab.RayHeadGroup
	if g, ok := strings.CutPrefix(role, "worker group "); ok {
		name = g
	}
	for _, sg := range pg.SubGroups {
		if sg.Name == name {
			return sg.MinMember, sg.Topology.Required
		}
	}
	return 0, ""
}
