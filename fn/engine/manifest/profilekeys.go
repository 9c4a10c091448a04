package manifest

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// The profile keys nrl-k8s declares and never applies, applied where their
// meaning is unambiguous (the inert rest is warned about by check):
//
//   - scheduler.kind=kai: schedulerName kai-scheduler on every Ray and
//     Deployment pod that names no scheduler, and the kai.scheduler/queue
//     label with the profile's labels (every object and pod template, where
//     KAI's pod grouper reads it);
//   - scheduler.kind=kueue: the kueue.x-k8s.io/queue-name label (and
//     kueue.x-k8s.io/priority-class with scheduler.workloadPriorityClass)
//     on the object Kueue admits, the RayJob (rayjob mode) or each
//     RayCluster (raycluster mode), and nowhere else; schedulerName and
//     spec.suspend are left alone (Kueue's webhook suspends on creation),
//     and a pod KAI does not place keeps none of KAI's topology annotations;
//   - scheduler.kueue beside kind kai: KAI's keys and Kueue's labels, each
//     as above (Kueue admits, KAI places);
//   - placement.nodeSelector / tolerations: on every GPU worker;
//   - scheduler.topology (ours): the gang's topology constraint on the
//     RayJob (rayjob mode) or RayCluster (raycluster mode);
//   - scheduler.priorityClassName and env (ours): on every Ray pod (head
//     and workers; the env in every container);
//   - checkpoints (training) and hf_cache (every cluster): a volume mounted
//     into every container of the head and workers.
//
// A setting that contradicts what the specs already say is an error naming
// both, never a silent winner.

// Volume names of the profile's checkpoints and hf_cache.
const (
	checkpointsVolume = "checkpoints"
	hfCacheVolume     = "hf-cache"
)

// withSchedulerLabels returns the profile with the KAI queue label among its
// labels (a copy: the loaded profile is not modified).
func withSchedulerLabels(in *profile.Infra) (*profile.Infra, error) {
	if _, _, ok := in.Scheduler.KueueAdmission(); ok {
		if err := kueueLabelsOnlyByScheduler(in); err != nil {
			return nil, err
		}
	}
	if in.Scheduler.Kind == "kueue" && !in.NamesKAIScheduler() {
		return withoutKAIQueue(in), nil
	}
	if in.Scheduler.Kind != "kai" || in.Scheduler.Queue == nil {
		return in, nil
	}
	q := *in.Scheduler.Queue
	if v, ok := in.Labels[vocab.KAIQueueLabel]; ok && v != q {
		return nil, errAt("labels."+vocab.KAIQueueLabel, "is %q but scheduler.queue is %q; expected one queue (drop the label: scheduler.queue sets it)", v, q)
	}
	for _, rc := range in.Kuberay.ByRole() {
		if v, ok := rc.Cluster.Labels[vocab.KAIQueueLabel]; ok && v != q {
			return nil, errAt("kuberay."+rc.Role+".labels."+vocab.KAIQueueLabel, "is %q but scheduler.queue is %q; expected one queue", v, q)
		}
	}
	for _, k := range tree.SortedKeys(in.Deployments) {
		if d := in.Deployments[k]; d != nil {
			if v, ok := d.Labels[vocab.KAIQueueLabel]; ok && v != q {
				return nil, errAt("deployments."+k+".labels."+vocab.KAIQueueLabel, "is %q but scheduler.queue is %q; expected one queue", v, q)
			}
		}
	}
	cp := *in
	cp.Labels = merged(in.Labels, map[string]string{vocab.KAIQueueLabel: q})
	return &cp, nil
}

// withoutKAIQueue is the profile without the kai.scheduler/queue label in
// its labels, its clusters' and its deployments' (a copy): under Kueue alone
// with no pod on KAI's scheduler, nothing reads it, and preflight would ask
// for a KAI Queue the run never uses (check warns about each one dropped).
func withoutKAIQueue(in *profile.Infra) *profile.Infra {
	cp := *in
	cp.Labels = without(in.Labels, vocab.KAIQueueLabel)
	for _, c := range []**profile.Cluster{&cp.Kuberay.Training, &cp.Kuberay.Generation, &cp.Kuberay.Gym} {
		if *c != nil {
			cl := **c
			cl.Labels = without(cl.Labels, vocab.KAIQueueLabel)
			*c = &cl
		}
	}
	if in.Deployments != nil {
		cp.Deployments = make(map[string]*profile.Deployment, len(in.Deployments))
		for k, d := range in.Deployments {
			if d != nil {
				dc := *d
				dc.Labels = without(d.Labels, vocab.KAIQueueLabel)
				d = &dc
			}
			cp.Deployments[k] = d
		}
	}
	return &cp
}

// without is labels without key (a copy; nil stays nil).
func without(labels map[string]string, key string) map[string]string {
	if _, ok := labels[key]; !ok {
		return labels
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// kueueLabelsOnlyByScheduler refuses Kueue's labels written by hand beside
// a profile that names Kueue (kind kueue, or kind kai with kueue): profile
// and cluster labels reach every object and pod template, while Kueue must
// see them on the admitted object only.
func kueueLabelsOnlyByScheduler(in *profile.Infra) error {
	why, keys := "scheduler.kind is kueue", "scheduler.queue and scheduler.workloadPriorityClass put"
	if in.Scheduler.Kind == "kai" {
		why, keys = "scheduler.kueue is set", "scheduler.kueue.queue and .workloadPriorityClass put"
	}
	for _, k := range []string{vocab.KueueQueueLabel, vocab.KueuePriorityClassLabel} {
		if _, ok := in.Labels[k]; ok {
			return errAt("labels."+k, "is set but %s; expected it unset: %s it on the RayJob (or RayCluster) alone, while labels reach every object and pod template", why, keys)
		}
		for _, rc := range in.Kuberay.ByRole() {
			if _, ok := rc.Cluster.Labels[k]; ok {
				return errAt("kuberay."+rc.Role+".labels."+k, "is set but %s; expected it unset: %s it on the RayJob (or RayCluster) alone, while kuberay.%s.labels reach its pod templates and ConfigMaps too", why, keys, rc.Role)
			}
		}
	}
	return nil
}

// admissionLabels are the labels of the object a queueing controller
// admits (the RayJob, or the RayCluster in raycluster mode): Kueue's queue
// name and workload priority class. nil unless the profile names Kueue
// (kind kueue, or kind kai with kueue).
func admissionLabels(in *profile.Infra) map[string]string {
	q, pc, ok := in.Scheduler.KueueAdmission()
	if !ok {
		return nil
	}
	out := map[string]string{vocab.KueueQueueLabel: q}
	if pc != nil {
		out[vocab.KueuePriorityClassLabel] = *pc
	}
	return out
}

// gangAnnotations are scheduler.topology as the annotations of the object
// KAI's pod-grouper makes the PodGroup for (the RayJob, or the RayCluster
// in raycluster mode): the PodGroup's own constraint, binding every pod of
// the gang (fn/analyse/kai). nil without one.
func gangAnnotations(in *profile.Infra) map[string]string {
	t := in.Scheduler.Topology
	if in.Scheduler.Kind != "kai" || t == nil {
		return nil
	}
	out := map[string]string{vocab.KAITopologyAnnotation: t.Topology}
	if t.RequiredPlacement != "" {
		out[vocab.KAIRequiredPlacementAnnotation] = t.RequiredPlacement
	}
	if t.PreferredPlacement != "" {
		out[vocab.KAIPreferredPlacementAnnotation] = t.PreferredPlacement
	}
	return out
}

// applyScheduler sets the scheduler on one pod template. Under Kueue alone
// (kind kueue) a pod that KAI does not place keeps none of KAI's topology
// annotations: nothing reads them, and a reader would take them for a
// constraint (check warns about each one dropped, and about a ComputeDomain
// that nothing keeps in one NVLink domain); nor its kai.scheduler/queue
// label when no pod of the run goes to KAI (withoutKAIQueue).
func applyScheduler(in *profile.Infra, field string, t *corev1.PodTemplateSpec) error {
	if in.Scheduler.Kind == "kueue" && t.Spec.SchedulerName != vocab.KAISchedulerName {
		for _, k := range kai.TopologyKeys() {
			delete(t.Annotations, k)
		}
		if !in.NamesKAIScheduler() {
			delete(t.Labels, vocab.KAIQueueLabel)
		}
		return nil
	}
	if in.Scheduler.Kind != "kai" {
		return nil
	}
	switch t.Spec.SchedulerName {
	case "":
		t.Spec.SchedulerName = vocab.KAISchedulerName
	case vocab.KAISchedulerName:
	default:
		return errAt(field+".spec.schedulerName", "is %q but scheduler.kind is kai; expected %s or no schedulerName", t.Spec.SchedulerName, vocab.KAISchedulerName)
	}
	if in.Scheduler.Queue != nil {
		if v, ok := t.Labels[vocab.KAIQueueLabel]; ok && v != *in.Scheduler.Queue {
			return errAt(field+".metadata.labels."+vocab.KAIQueueLabel, "is %q but scheduler.queue is %q; expected one queue", v, *in.Scheduler.Queue)
		}
	}
	return nil
}

// applyPlacement puts the profile's node selector and tolerations on a GPU
// worker.
func applyPlacement(in *profile.Infra, field string, spec *corev1.PodSpec) error {
	if n, _ := capacity.GPUsPerPod(spec); n == 0 {
		return nil
	}
	for _, k := range tree.SortedKeys(in.Placement.NodeSelector) {
		v := in.Placement.NodeSelector[k]
		if old, ok := spec.NodeSelector[k]; ok && old != v {
			return errAt(field+".nodeSelector."+k, "is %q but placement.nodeSelector.%s is %q; expected one value", old, k, v)
		}
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		spec.NodeSelector[k] = v
	}
	for _, pt := range in.Placement.Tolerations {
		t := corev1.Toleration{Key: pt.Key, Operator: corev1.TolerationOperator(pt.Operator), Effect: corev1.TaintEffect(pt.Effect)}
		if pt.Value != nil {
			t.Value = *pt.Value
		}
		if pt.TolerationSeconds != nil {
			s := int64(*pt.TolerationSeconds)
			t.TolerationSeconds = &s
		}
		dup := false
		for _, have := range spec.Tolerations {
			dup = dup || reflect.DeepEqual(have, t)
		}
		if !dup {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	return nil
}

// applyRunPod puts scheduler.priorityClassName and env on a Ray pod: the
// priority class on the pod, the variables after each container's own (in
// name order).
func applyRunPod(in *profile.Infra, field string, spec *corev1.PodSpec) error {
	if pc := in.Scheduler.PriorityClassName; pc != nil {
		switch spec.PriorityClassName {
		case "", *pc:
			spec.PriorityClassName = *pc
		default:
			return errAt(field+".priorityClassName", "is %q but scheduler.priorityClassName is %q; expected one priority class", spec.PriorityClassName, *pc)
		}
	}
	if len(in.Env) == 0 {
		return nil
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		for _, e := range c.Env {
			if _, ok := in.Env[e.Name]; ok {
				return errAt(fmt.Sprintf("%s.containers[%d].env", field, i), "already sets %s; expected env.%s to add a variable, not to replace one (set it in one place)", e.Name, e.Name)
			}
		}
		for _, k := range tree.SortedKeys(in.Env) {
			c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: in.Env[k]})
		}
	}
	return nil
}

// applyVolumes mounts checkpoints (training only) and hf_cache into every
// container of a Ray pod.
func applyVolumes(in *profile.Infra, role, field string, spec *corev1.PodSpec) error {
	type vol struct {
		key, name, mount, subPath string
		src                       corev1.VolumeSource
	}
	var vols []vol
	pvc := func(name *string) corev1.VolumeSource {
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: *name}}
	}
	if role == "training" && (in.Checkpoints.Kind == "pvc" || in.Checkpoints.Kind == "lustre") {
		vols = append(vols, vol{"checkpoints", checkpointsVolume, in.Checkpoints.MountPath, deref(in.Checkpoints.SubPath), pvc(in.Checkpoints.PVCName)})
	}
	switch in.HFCache.Kind {
	case "pvc", "lustre":
		vols = append(vols, vol{"hf_cache", hfCacheVolume, in.HFCache.MountPath, deref(in.HFCache.SubPath), pvc(in.HFCache.PVCName)})
	case "emptyDir":
		vols = append(vols, vol{"hf_cache", hfCacheVolume, in.HFCache.MountPath, "", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	for _, v := range vols {
		for _, have := range spec.Volumes {
			if have.Name == v.name {
				return errAt(field+".volumes", "already has a volume named %q; expected that name free for %s (or drop %s from the profile and mount it by hand)", v.name, v.key, v.key)
			}
		}
		for i := range spec.Containers {
			for _, m := range spec.Containers[i].VolumeMounts {
				if m.MountPath == v.mount {
					return errAt(fmt.Sprintf("%s.containers[%d].volumeMounts", field, i), "already mounts %s; expected that path free for %s.mountPath (or drop %s from the profile)", v.mount, v.key, v.key)
				}
			}
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: v.name, VolumeSource: v.src})
		for i := range spec.Containers {
			spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, corev1.VolumeMount{Name: v.name, MountPath: v.mount, SubPath: v.subPath})
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
