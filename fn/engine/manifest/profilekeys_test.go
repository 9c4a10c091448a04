package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// The scheduler's labels join the profile's (kind kai); a contradiction is
// the build's error at its field; the loaded profile is never modified.
func TestWithSchedulerLabels(t *testing.T) {
	for _, tc := range []struct {
		name, profile, field string
		labels               map[string]string
	}{
		{"kai adds its queue", "scheduler: {kind: kai, queue: q}\nlabels: {team: a}", "", map[string]string{"team": "a", "kai.scheduler/queue": "q"}},
		{"default adds none", "scheduler: {kind: default}\nlabels: {team: a}", "", map[string]string{"team": "a"}},
		{"kai, another queue", "scheduler: {kind: kai, queue: q}\nlabels: {kai.scheduler/queue: b}", "labels.kai.scheduler/queue", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infraOf(t, tc.profile)
			before := in.Labels
			out, err := withSchedulerLabels(in)
			require.Equal(t, tc.field, fieldOf(err), "%v", err)
			if tc.field == "" {
				require.Equal(t, tc.labels, out.Labels)
			}
			require.Equal(t, before, in.Labels)
		})
	}
}

// withoutLabel drops the key from the profile's, every cluster's and every
// deployment's labels, in a copy.
func TestWithoutLabel(t *testing.T) {
	const k = "kai.scheduler/queue"
	in := infraOf(t, "labels: {kai.scheduler/queue: q, team: a}\nkuberay: {gym: {labels: {kai.scheduler/queue: q}}}\ndeployments: {d: {labels: {kai.scheduler/queue: q}}, e: null}")
	out := withoutLabel(in, k)
	for _, tc := range []struct {
		name      string
		got, orig map[string]string
		want      map[string]string
	}{
		{"profile", out.Labels, in.Labels, map[string]string{"team": "a"}},
		{"cluster", out.Kuberay.Gym.Labels, in.Kuberay.Gym.Labels, map[string]string{}},
		{"deployment", out.Deployments["d"].Labels, in.Deployments["d"].Labels, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.got)
			require.Contains(t, tc.orig, k)
		})
	}
	require.Nil(t, out.Deployments["e"])
	require.Contains(t, out.Deployments, "e")
}

// Each profile key on a pod: the GPU worker's placement, every Ray pod's
// priority class and env, the volumes; a setting that contradicts the pod
// is an error at the pod's field.
func TestApplyProfileKeys(t *testing.T) {
	type apply = func(*profile.Infra, *corev1.PodSpec) error
	placement := func(in *profile.Infra, s *corev1.PodSpec) error { return applyPlacement(in, "w", s) }
	runPod := func(in *profile.Infra, s *corev1.PodSpec) error { return applyRunPod(in, "w", s) }
	volumes := func(role string) apply {
		return func(in *profile.Infra, s *corev1.PodSpec) error { return applyVolumes(in, role, "w", s) }
	}
	selector := func(p *corev1.PodSpec) any { return p.NodeSelector }
	tolerations := func(p *corev1.PodSpec) any { return len(p.Tolerations) }
	class := func(p *corev1.PodSpec) any { return p.PriorityClassName }
	vols := func(p *corev1.PodSpec) any { return len(p.Volumes) }
	const tol = "placement: {tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}]}"
	const ckpt = "checkpoints: {kind: pvc, pvcName: c, mountPath: /ckpt, subPath: run}"
	const hf = "hf_cache: {kind: emptyDir, mountPath: /hf}"
	for _, tc := range []struct {
		name, profile string
		apply         apply
		edit          func(*corev1.PodSpec)
		field         string
		check         func(*corev1.PodSpec) any
		want          any
	}{
		{"node selector on a GPU worker", "placement: {nodeSelector: {pool: a}}", placement, nil, "", selector, map[string]string{"pool": "a"}},
		{"node selector clash", "placement: {nodeSelector: {pool: a}}", placement, func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "b"} },
			"w.nodeSelector.pool", selector, map[string]string{"pool": "b"}},
		{"CPU pod untouched", "placement: {nodeSelector: {pool: a}}", placement, func(p *corev1.PodSpec) { p.Containers[0].Resources = corev1.ResourceRequirements{} },
			"", selector, map[string]string(nil)},
		{"toleration added", tol, placement, nil, "", func(p *corev1.PodSpec) any { return p.Tolerations },
			[]corev1.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule", TolerationSeconds: ptr(int64(30))}}},
		{"toleration not doubled", tol, placement, func(p *corev1.PodSpec) {
			p.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule", TolerationSeconds: ptr(int64(30))}}
		}, "", tolerations, 1},
		{"priority class", "scheduler: {priorityClassName: high}", runPod, nil, "", class, "high"},
		{"priority class, same", "scheduler: {priorityClassName: high}", runPod, func(p *corev1.PodSpec) { p.PriorityClassName = "high" }, "", class, "high"},
		{"priority class clash", "scheduler: {priorityClassName: high}", runPod, func(p *corev1.PodSpec) { p.PriorityClassName = "low" }, "w.priorityClassName", class, "low"},
		{"env in name order", "env: {B: b, A: a}", runPod, nil, "", func(p *corev1.PodSpec) any { return p.Containers[0].Env },
			[]corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "B", Value: "b"}}},
		{"env replaces one", "env: {A: a}", runPod, func(p *corev1.PodSpec) { p.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "mine"}} },
			"w.containers[0].env", func(p *corev1.PodSpec) any { return p.Containers[0].Env }, []corev1.EnvVar{{Name: "A", Value: "mine"}}},
		{"checkpoints on training", ckpt, volumes("training"), nil, "", func(p *corev1.PodSpec) any { return p.Containers[0].VolumeMounts },
			[]corev1.VolumeMount{{Name: "checkpoints", MountPath: "/ckpt", SubPath: "run"}}},
		{"no checkpoints on generation", ckpt, volumes("generation"), nil, "", vols, 0},
		{"hf_cache emptyDir", hf, volumes("generation"), nil, "", func(p *corev1.PodSpec) any { return p.Volumes[0].EmptyDir != nil }, true},
		{"volume name taken", hf, volumes("training"), func(p *corev1.PodSpec) { p.Volumes = []corev1.Volume{{Name: "hf-cache"}} }, "w.volumes", vols, 1},
		{"mount path taken", hf, volumes("training"), func(p *corev1.PodSpec) {
			p.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/hf"}}
		}, "w.containers[0].volumeMounts", vols, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}}
			if tc.edit != nil {
				tc.edit(spec)
			}
			err := tc.apply(infraOf(t, tc.profile), spec)
			require.Equal(t, tc.field, fieldOf(err), "%v", err)
			require.Equal(t, tc.want, tc.check(spec))
		})
	}
}

// applyScheduler is the integrations' rule with their error at its field.
func TestApplyScheduler(t *testing.T) {
	for _, tc := range []struct {
		name, profile, sched, want, field string
	}{
		{"kai fills", "scheduler: {kind: kai, queue: q}", "", "kai-scheduler", ""},
		{"kai refuses another", "scheduler: {kind: kai, queue: q}", "volcano", "volcano", "w.spec.schedulerName"},
		{"default leaves it", "scheduler: {kind: default}", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: tc.sched}}
			err := applyScheduler(infraOf(t, tc.profile), "w", tpl)
			require.Equal(t, tc.field, fieldOf(err), "%v", err)
			require.Equal(t, tc.want, tpl.Spec.SchedulerName)
		})
	}
}
