package manifest

import (
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// The profile keys nrl-k8s declares and never applies, applied where their
// meaning is unambiguous (the inert rest is warned about by check). What
// each scheduler writes is its integration's (fn/scheduler/kai,
// fn/scheduler/kueue); this file applies it:
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
//   - scheduler.dispatch (scheduler.kueue.dispatch beside KAI): multikueue
//     puts MultiKueue's spec.managedBy on the object Kueue admits, and
//     refuses what MultiKueue cannot dispatch whole (dispatch.go);
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

// withSchedulerLabels returns the profile with the labels its scheduler
// integrations (fn/scheduler) add among its labels, and without those they
// drop from every label set of it (a copy: the loaded profile is not
// modified).
func withSchedulerLabels(in *profile.Infra) (*profile.Infra, error) {
	set, drop, err := registry.ProfileLabels(in.SchedulerView())
	if err != nil {
		return nil, schedulerError(err)
	}
	if len(set) == 0 && len(drop) == 0 {
		return in, nil
	}
	cp := *in
	for _, key := range drop {
		cp = *withoutLabel(&cp, key)
	}
	if len(set) > 0 {
		cp.Labels = merged(cp.Labels, set)
	}
	return &cp, nil
}

// withoutLabel is the profile without label key in its labels, its
// clusters' and its deployments' (a copy).
func withoutLabel(in *profile.Infra, key string) *profile.Infra {
	cp := *in
	cp.Labels = without(in.Labels, key)
	for _, c := range []**profile.Cluster{&cp.Kuberay.Training, &cp.Kuberay.Generation, &cp.Kuberay.Gym} {
		if *c != nil {
			cl := **c
			cl.Labels = without(cl.Labels, key)
			*c = &cl
		}
	}
	if in.Deployments != nil {
		cp.Deployments = make(map[string]*profile.Deployment, len(in.Deployments))
		for k, d := range in.Deployments {
			if d != nil {
				dc := *d
				dc.Labels = without(d.Labels, key)
				d = &dc
			}
			cp.Deployments[k] = d
		}
	}
	return &cp
}

// schedulerError is an integration's contradiction as the build's error at
// its field.
func schedulerError(err error) error {
	if fe, ok := errors.AsType[*scheduler.FieldError](err); ok {
		return errAt(fe.Field, "%s", fe.Msg)
	}
	return err
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

// admissionLabels are the labels of the object a queueing controller
// admits (the RayJob, or the RayCluster in raycluster mode), from the
// scheduler integrations: Kueue's queue name and workload priority class.
func admissionLabels(in *profile.Infra) map[string]string {
	return registry.OwnerLabels(in.Scheduler.View())
}

// gangAnnotations are the annotations of the object a gang scheduler
// groups (the RayJob, or the RayCluster in raycluster mode), from the
// scheduler integrations: scheduler.topology as KAI's pod-grouper reads it.
func gangAnnotations(in *profile.Infra) map[string]string {
	return registry.OwnerAnnotations(in.Scheduler.View())
}

// applyScheduler sets the scheduler on one pod template, as the scheduler
// integrations say (fn/scheduler).
func applyScheduler(in *profile.Infra, field string, t *corev1.PodTemplateSpec) error {
	return schedulerError(registry.Pod(in.SchedulerView(), field, t))
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
