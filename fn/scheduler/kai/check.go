package kai

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// CheckObjects says how the run's pods will be scheduled together,
// whichever kind the profile selects: a KAI worker group claiming a
// ComputeDomain without a topology annotation; for a Ray cluster KAI
// places, its PodGroup and SubGroups (fn/analyse/kai) as an info and a
// ComputeDomain no required constraint keeps together; for one it does not,
// a multi-node run placed in part, or a ComputeDomain nothing keeps in one
// NVLink domain; and one run's pods going to different schedulers.
func (Integration) CheckObjects(file string, objs []any) diag.List {
	var ds diag.List
	for _, o := range objs {
		switch t := o.(type) {
		case *rayv1.RayJob:
			if t.Spec.RayClusterSpec != nil {
				topologyAnnotation(&ds, file, "output RayJob/"+t.Name+" spec.rayClusterSpec", t.Spec.RayClusterSpec)
			}
		case *rayv1.RayCluster:
			topologyAnnotation(&ds, file, "output RayCluster/"+t.Name+" spec", &t.Spec)
		}
	}
	schedulers := map[string][]string{}
	reports := map[string]GangReport{}
	for _, r := range GangsOf(objs) {
		reports[r.Cluster.Object] = r
	}
	for _, o := range objs {
		switch t := o.(type) {
		case *rayv1.RayJob, *rayv1.RayCluster:
			if r, ok := reports[refOf(t)]; ok {
				gang(&ds, file, r, schedulers)
			}
		case *appsv1.Deployment:
			s := scheduler.NameOf(&t.Spec.Template.Spec)
			schedulers[s] = append(schedulers[s], "Deployment/"+t.Name)
		}
	}
	if len(schedulers) > 1 {
		var parts []string
		for _, s := range tree.SortedKeys(schedulers) {
			parts = append(parts, fmt.Sprintf("%s (%s)", s, strings.Join(schedulers[s], ", ")))
		}
		ds.Warnf(file, "", "the run's pods go to %d schedulers: %s; a pod outside the gang scheduler escapes its queue's accounting and is placed on its own; expected one schedulerName for every pod of the run (scheduler.kind: kai sets it on every Ray and Deployment pod that names none)", len(schedulers), strings.Join(parts, "; "))
	}
	return ds
}

// topologyAnnotation warns about a worker group KAI places that claims a
// ComputeDomain without a topology annotation (the segments of one group
// once). A pod KAI does not place is gang's to warn about: no annotation
// would constrain it.
func topologyAnnotation(ds *diag.List, file, where string, spec *rayv1.RayClusterSpec) {
	index, names := capacity.FirstOfEachGroup(spec.WorkerGroupSpecs)
	for k, i := range index {
		g, name := &spec.WorkerGroupSpecs[i], names[k]
		hasCD := false
		for _, c := range g.Template.Spec.ResourceClaims {
			hasCD = hasCD || c.Name == vocab.ComputeDomainClaim
		}
		if hasCD && g.Template.Spec.SchedulerName == vocab.KAISchedulerName && g.Template.Annotations[vocab.KAITopologyAnnotation] == "" {
			ds.Warnf(file, fmt.Sprintf("%s.workerGroupSpecs[%d].template.metadata.annotations", where, i), "worker group %q claims a ComputeDomain spanning nodes but has no %s annotation; expected KAI topology so the workers land in one NVLink domain", name, vocab.KAITopologyAnnotation)
		}
	}
}

// GangReport is how one Ray cluster's pods are scheduled together, as
// check reports it: its run as fn/analyse/placement groups it
// (placement.RunsOf over workload's pod sets, the runs preflight places),
// a gang when KAI places it as one PodGroup.
type GangReport struct {
	Cluster workload.Cluster
	Run     placement.Run
	// KAI: the cluster's pods name KAI; Err is what KAI's pod-grouper
	// refuses (no gang is made).
	KAI bool
	Err error
}

// GangsOf is the gang report of every Ray cluster the objects ask for, in
// object order. Objects that do not decode are check's Output finding, and
// left out here.
func GangsOf(objs []any) []GangReport {
	read, err := workload.Objects(objs)
	if err != nil {
		return nil
	}
	pods, _ := workload.Pods(read)
	clusters, _ := workload.Clusters(read)
	gangs := placement.Gangs(clusters, "")
	shapes := make([]placement.Shape, len(pods))
	for i, p := range pods {
		shapes[i] = placement.Shape{Pod: p}
	}
	runs, index := placement.RunsOf(shapes, gangs)
	byKey := map[string]placement.Run{}
	for i, r := range runs {
		// A submitter's or a Deployment's pods are runs of their own.
		if len(index[i]) > 0 && pods[index[i][0]].Role == "head" {
			byKey[placement.Key(pods[index[i][0]].Namespace, r.Name, "")] = r
		}
	}
	out := make([]GangReport, 0, len(clusters))
	for _, c := range clusters {
		key := placement.Key(c.Namespace, c.Object, "")
		g, isKAI := gangs[key]
		out = append(out, GangReport{Cluster: c, Run: byKey[key], KAI: isKAI, Err: g.Err})
	}
	return out
}

func refOf(o any) string {
	switch t := o.(type) {
	case *rayv1.RayJob:
		return "RayJob/" + t.Name
	case *rayv1.RayCluster:
		return "RayCluster/" + t.Name
	}
	return ""
}

// gang says how one Ray cluster's pods are scheduled together, and adds
// the schedulers its pods go to.
func gang(ds *diag.List, file string, r GangReport, schedulers map[string][]string) {
	ref, spec, labels := r.Cluster.Object, r.Cluster.Spec, r.Cluster.Labels
	where := "output " + ref + " " + r.Cluster.Path
	templates := []*corev1.PodTemplateSpec{&spec.HeadGroupSpec.Template}
	for i := range spec.WorkerGroupSpecs {
		templates = append(templates, &spec.WorkerGroupSpecs[i].Template)
	}
	seen := map[string]bool{}
	for _, t := range templates {
		if s := scheduler.NameOf(&t.Spec); !seen[s] {
			seen[s] = true
			schedulers[s] = append(schedulers[s], ref)
		}
	}
	gpuPods, cdGroups := int64(0), []int(nil)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		if n, _ := capacity.GPUsPerPod(&g.Template.Spec); n > 0 {
			gpuPods += capacity.WorkerPods(g, false)
		}
		for _, c := range g.Template.Spec.ResourceClaims {
			if c.Name == vocab.ComputeDomainClaim {
				cdGroups = append(cdGroups, i)
			}
		}
	}
	cdPods, cdNames := int64(0), make([]string, len(cdGroups))
	for k, i := range cdGroups {
		cdPods += capacity.WorkerPods(&spec.WorkerGroupSpecs[i], false)
		cdNames[k] = spec.WorkerGroupSpecs[i].GroupName
	}
	pg := r.Run.PodGroup
	if !r.KAI {
		if gpuPods > 1 && labels[vocab.KueueQueueLabel] == "" {
			ds.Warnf(file, where, "%s has %d GPU pods and no gang scheduler (its pods go to %s): the scheduler places them one by one, so on a busy cluster some bind and hold their GPUs while the rest wait, and the RayCluster is never ready; expected scheduler.kind: kai (one PodGroup, all or nothing) or a Kueue queue", ref, gpuPods, schedulerList(seen))
		}
		if cdPods > 1 {
			admits := ""
			if q := labels[vocab.KueueQueueLabel]; q != "" {
				admits = fmt.Sprintf(" (Kueue, through LocalQueue %s, admits the run against quota and places no pod)", q)
			}
			ds.Warnf(file, where, "the ComputeDomain of %s spans %d pods in worker groups %s, and nothing keeps them in one NVLink domain: its pods go to %s, which reads no topology%s, so they may land on different racks while the ComputeDomain expects one; expected KAI to place them (scheduler: {kind: kai, queue: Q, topology: {topology: T}}, with scheduler.kueue beside it to keep Kueue's admission) with the level (nvidia.com/gpu.clique) required on one worker group that holds them (segmentSize at least its replicas; a run-wide requiredPlacement binds the CPU head too, so only when the head's nodes are in the domain), or the workers pinned to one clique by a nodeSelector",
				ref, cdPods, strings.Join(cdNames, ", "), schedulerList(seen), admits)
		}
		return
	}
	if r.Err != nil {
		ds.Errorf(file, where, "KAI would not schedule it: %v", r.Err)
		return
	}
	var parts []string
	for _, sg := range pg.SubGroups {
		parts = append(parts, fmt.Sprintf("%s %d (%s)", sg.Name, sg.MinMember, sg.Topology))
	}
	ds.Infof(file, where, "KAI schedules %s as one gang: a PodGroup of %d pods, all or nothing, with run-wide topology %s; subgroups (pods, topology that keeps each together): %s",
		ref, pg.MinMember, pg.Topology, strings.Join(parts, ", "))
	if n, _ := capacity.GPUsPerPod(&spec.HeadGroupSpec.Template.Spec); r.Run.Required != "" && n == 0 {
		ds.Warnf(file, where, "KAI's run-wide required placement (%s) binds every pod of %s's PodGroup, the head's included: the head must run on a node carrying %s, in the workers' domain, or KAI places none of the run (all or nothing); a CPU head's pool seldom carries a GPU level (preflight --nodes tells, on the cluster); expected the level required on the worker groups instead (their pod templates' %s; one worker group, segmentSize at least its replicas, keeps them in one domain), unless the head's nodes are in the domain",
			pg.Topology.Required, ref, pg.Topology.Required, vocab.KAIRequiredPlacementAnnotation)
	}
	if cdPods > 1 && !pg.KeptTogether(cdGroups) {
		ds.Warnf(file, where, "the ComputeDomain of %s spans %d pods in worker groups %s, and no required topology constraint keeps them in one domain: KAI applies a pod template's placement to that worker group alone (its pod-grouper makes one subgroup per group), so the groups may land in different NVLink domains; expected one worker group (segmentSize at least its replicas) with the level required on it, if they must share one domain (scheduler.topology.requiredPlacement for the whole run binds the CPU head too: only when the head's nodes are in the domain)",
			ref, cdPods, strings.Join(cdNames, ", "))
	}
}

func schedulerList(seen map[string]bool) string { return strings.Join(tree.SortedKeys(seen), ", ") }
