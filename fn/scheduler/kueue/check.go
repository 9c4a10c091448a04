package kueue

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Kueue's limits on what it admits, as sigs.k8s.io/kueue v0.17.0 states
// them: a Workload has at most 8 PodSets (apis/kueue/v1beta2
// workload_types.go, +kubebuilder:validation:MaxItems=8 on podSets); a Ray
// object makes one for the head, one per worker group and, in K8sJobMode,
// one for the submitter Job (pkg/controller/jobs/raycluster/common.go
// BuildPodSets, rayjob/rayjob_controller.go addSubmitterPodSet).
const (
	kueueMaxPodSets = 8
	kueueMaxWorkers = 7 // raycluster_webhook.go: "max podSets num - cluster head"
	kueueHeadPodSet = "head"
)

// CheckObjects judges the Ray objects that carry Kueue's queue label as Kueue's
// RayJob and RayCluster webhooks do (sigs.k8s.io/kueue v0.17.0
// pkg/controller/jobs/rayjob/rayjob_webhook.go validateCreate,
// pkg/controller/jobs/raycluster/raycluster_webhook.go ValidateCreate), so
// a refusal shows at render time instead of at apply, and says what Kueue
// will admit: one Workload, its PodSets and their pods, all or nothing.
// It also warns when the label sits on pod templates, where Kueue does not
// read it for a Ray object's pods.
// It is Kueue's part of check's Objects gate (registry.CheckObjects).
func (Integration) CheckObjects(file string, objs []any) diag.List {
	var ds diag.List
	for _, o := range objs {
		switch t := o.(type) {
		case *rayv1.RayJob:
			ref, where := "RayJob/"+t.Name, "output RayJob/"+t.Name
			q := t.Labels[vocab.KueueQueueLabel]
			if t.Spec.RayClusterSpec != nil {
				templateLabels(&ds, file, where+" spec.rayClusterSpec", ref, q, t.Spec.RayClusterSpec)
			}
			if q == "" {
				continue
			}
			if len(t.Spec.ClusterSelector) > 0 {
				if t.Spec.RayClusterSpec != nil {
					ds.Errorf(file, where+" spec.clusterSelector", "is set with spec.rayClusterSpec on a job in Kueue queue %s; Kueue refuses it (a kueue managed job should not use an existing cluster); expected one of the two", q)
				} else {
					ds.Warnf(file, where+" metadata.labels."+vocab.KueueQueueLabel, "is set on a job that runs on an existing cluster (spec.clusterSelector); Kueue leaves such jobs alone; expected the label on the RayCluster, which holds the resources")
				}
				continue
			}
			if t.Spec.RayClusterSpec == nil {
				continue
			}
			if !t.Spec.ShutdownAfterJobFinishes {
				ds.Errorf(file, where+" spec.shutdownAfterJobFinishes", "is false on a job in Kueue queue %s; Kueue's webhook refuses it (the cluster would hold the queue's quota after the job ends); expected launch.rayjob.shutdownAfterJobFinishes: true", q)
			}
			submitter := t.Spec.SubmissionMode == rayv1.K8sJobMode
			kueueCluster(&ds, file, where+" spec.rayClusterSpec", ref, q, t.Spec.RayClusterSpec, submitter)
		case *rayv1.RayCluster:
			ref, where := "RayCluster/"+t.Name, "output RayCluster/"+t.Name
			q := t.Labels[vocab.KueueQueueLabel]
			templateLabels(&ds, file, where+" spec", ref, q, &t.Spec)
			if q != "" {
				kueueCluster(&ds, file, where+" spec", ref, q, &t.Spec, false)
			}
		}
	}
	return ds
}

// kueueCluster applies the rules Kueue's webhooks share for a cluster spec
// and says what the Workload will be.
func kueueCluster(ds *diag.List, file, where, ref, queue string, spec *rayv1.RayClusterSpec, submitter bool) {
	if capacity.Autoscaling(spec) {
		ds.Errorf(file, where+".enableInTreeAutoscaling", "is true on %s in Kueue queue %s; Kueue's webhook refuses autoscaling (it reserves quota once, for the declared replicas); expected false", ref, queue)
	}
	if n := len(spec.WorkerGroupSpecs); n > kueueMaxWorkers {
		ds.Errorf(file, where+".workerGroupSpecs", "has %d worker groups on %s in Kueue queue %s; Kueue's webhook refuses more than %d (a Workload has at most %d PodSets, one is the head); expected at most %d worker groups (a larger kuberay.<role>.segmentSize, or none)", n, ref, queue, kueueMaxWorkers, kueueMaxPodSets, kueueMaxWorkers)
	} else if submitter && n+2 > kueueMaxPodSets {
		ds.Errorf(file, where+".workerGroupSpecs", "has %d worker groups on %s in Kueue queue %s with submissionMode K8sJobMode; with the head and the submitter Job that is %d PodSets and a Workload holds at most %d; expected at most %d worker groups, or launch.rayjob.submissionMode: HTTPMode", n, ref, queue, n+2, kueueMaxPodSets, kueueMaxPodSets-2)
	}
	sets := []string{fmt.Sprintf("%s 1", kueueHeadPodSet)}
	pods := int64(1)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		if g.GroupName == kueueHeadPodSet {
			ds.Errorf(file, fmt.Sprintf("%s.workerGroupSpecs[%d].groupName", where, i), "is %q on %s in Kueue queue %s; Kueue's webhook reserves it for the head's PodSet; expected another group name", g.GroupName, ref, queue)
		}
		n := capacity.WorkerPods(g, false)
		pods += n
		sets = append(sets, fmt.Sprintf("%s %d", g.GroupName, n))
	}
	if submitter {
		sets = append(sets, "submitter 1")
		pods++
	}
	ds.Infof(file, where, "Kueue admits %s from LocalQueue %s as one Workload of %d pods (PodSets: %s): quota for all of them is reserved before KubeRay creates any; until then the object stays suspended (Kueue's webhook suspends it on creation, so the render leaves spec.suspend unset)",
		ref, queue, pods, strings.Join(sets, ", "))
}

// templateLabels warns about Kueue's labels on a Ray object's pod
// templates: Kueue reads the queue from the RayJob or RayCluster; on the
// pods the label only confuses Kueue's pod integration, where it is on.
func templateLabels(ds *diag.List, file, where, ref, queue string, spec *rayv1.RayClusterSpec) {
	check := func(field string, labels map[string]string) bool {
		for _, k := range []string{vocab.KueueQueueLabel, vocab.KueuePriorityClassLabel} {
			if _, ok := labels[k]; ok {
				fix := "set scheduler: {kind: kueue, queue: Q} in the profile (it labels the RayJob or RayCluster alone) instead of kuberay.<role>.labels"
				if queue == "" {
					fix = "the label on the RayJob or RayCluster, where Kueue reads it: " + fix
				}
				ds.Warnf(file, field+".metadata.labels."+k, "is set on a pod template of %s; Kueue reads its labels from the RayJob or RayCluster and never from that object's pods; expected %s", ref, fix)
				return true
			}
		}
		return false
	}
	if check(where+".headGroupSpec.template", spec.HeadGroupSpec.Template.Labels) {
		return
	}
	for i := range spec.WorkerGroupSpecs {
		if check(fmt.Sprintf("%s.workerGroupSpecs[%d].template", where, i), spec.WorkerGroupSpecs[i].Template.Labels) {
			return
		}
	}
}
