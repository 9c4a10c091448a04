package admission

import (
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobMutation changes one RayJob field; refused is KubeRay's verdict on the
// rayClusterSpec base (the clusterSelector base is compared, not pinned).
type jobMutation struct {
	name    string
	refused bool
	apply   func(*rayv1.RayJob)
}

type clusterMutation struct {
	name    string
	refused bool
	apply   func(*rayv1.RayClusterSpec, *metav1.ObjectMeta)
}

func i32(v int32) *int32 { return &v }

var jobMutations = []jobMutation{
	{"unchanged", false, func(*rayv1.RayJob) {}},
	{"ttl without shutdown", true, func(j *rayv1.RayJob) {
		j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = false, 3600
	}},
	{"no ttl, no shutdown", false, func(j *rayv1.RayJob) {
		j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = false, 0
	}},
	{"shutdown with ttl", false, func(j *rayv1.RayJob) {
		j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, 60
	}},
	{"negative ttl", true, func(j *rayv1.RayJob) { j.Spec.TTLSecondsAfterFinished = -1 }},
	{"suspend without shutdown", true, func(j *rayv1.RayJob) {
		j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, false, 0
	}},
	{"suspend with shutdown", false, func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }},
	{"deletion strategy without its feature gate", true, func(j *rayv1.RayJob) {
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{}
	}},
	{"no cluster spec, no selector", true, func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec, j.Spec.ClusterSelector = nil, nil
	}},
	{"selector without the cluster key", true, func(j *rayv1.RayJob) {
		j.Spec.ClusterSelector = map[string]string{"team": "rl"}
	}},
	{"selector naming a cluster", false, func(j *rayv1.RayJob) {
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "c"}
	}},
	{"selector in sidecar mode", true, func(j *rayv1.RayJob) {
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "c"}
		j.Spec.SubmissionMode = rayv1.SidecarMode
	}},
	{"interactive with retries", true, func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode, j.Spec.BackoffLimit = rayv1.InteractiveMode, i32(1)
	}},
	{"sidecar with a submitter template", true, func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.SidecarMode
		j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{}
	}},
	{"sidecar with a submitter config", true, func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.SidecarMode
		j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{}
	}},
	{"sidecar with a restarting head", true, func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.SidecarMode
		if j.Spec.RayClusterSpec == nil {
			j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "c"}
			return
		}
		j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}},
	{"runtime env that is not YAML", true, func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "env_vars: [a" }},
	{"runtime env mapping", false, func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "env_vars:\n  A: b\n" }},
	{"zero deadline", true, func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = i32(0) }},
	{"negative backoff", true, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = i32(-1) }},
	{"name over 47 characters", true, func(j *rayv1.RayJob) { j.Name = strings.Repeat("a", 48) }},
	{"name of 47 characters", false, func(j *rayv1.RayJob) { j.Name = strings.Repeat("a", 47) }},
	{"name with capitals", true, func(j *rayv1.RayJob) { j.Name = "Sweep-a" }},
	{"name starting with a digit", true, func(j *rayv1.RayJob) { j.Name = "1sweep" }},
}

func headEnv(s *rayv1.RayClusterSpec, name, value string) {
	cs := s.HeadGroupSpec.Template.Spec.Containers
	if len(cs) == 0 {
		return
	}
	cs[0].Env = append(cs[0].Env, corev1.EnvVar{Name: name, Value: value})
}

func firstWorker(s *rayv1.RayClusterSpec) *rayv1.WorkerGroupSpec {
	if len(s.WorkerGroupSpecs) == 0 {
		s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: "w"})
	}
	return &s.WorkerGroupSpecs[0]
}

func params(m *map[string]string) map[string]string {
	if *m == nil {
		*m = map[string]string{}
	}
	return *m
}

func annotate(md *metav1.ObjectMeta, k, v string) {
	if md.Annotations == nil {
		md.Annotations = map[string]string{}
	}
	md.Annotations[k] = v
}

func autoscaling(s *rayv1.RayClusterSpec, on bool) { s.EnableInTreeAutoscaling = &on }

var v2 = rayv1.AutoscalerVersionV2

var clusterMutations = []clusterMutation{
	{"name over 53 characters", true, func(_ *rayv1.RayClusterSpec, md *metav1.ObjectMeta) { md.Name = strings.Repeat("c", 54) }},
	{"head without containers", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		s.HeadGroupSpec.Template.Spec.Containers = nil
	}},
	{"worker without containers", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		firstWorker(s).Template.Spec.Containers = nil
	}},
	{"head resources twice", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		params(&s.HeadGroupSpec.RayStartParams)["num-cpus"] = "0"
		s.HeadGroupSpec.Resources = map[string]string{"CPU": "1"}
	}},
	{"worker resources twice", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		w := firstWorker(s)
		params(&w.RayStartParams)["resources"] = `"{}"`
		w.Resources = map[string]string{"GPU": "4"}
	}},
	{"worker resources once", false, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		w := firstWorker(s)
		for _, k := range []string{"num-cpus", "num-gpus", "memory", "resources"} {
			delete(w.RayStartParams, k)
		}
		w.Resources = map[string]string{"GPU": "4"}
	}},
	{"labels in rayStartParams", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		params(&firstWorker(s).RayStartParams)["labels"] = "a=b"
	}},
	{"bad group label key", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		firstWorker(s).Labels = map[string]string{"bad key": "v"}
	}},
	{"bad group label value", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		s.HeadGroupSpec.Labels = map[string]string{"zone": "has spaces"}
	}},
	{"good group labels", false, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		firstWorker(s).Labels = map[string]string{"ray.io/zone": "nvl72-a"}
	}},
	{"ft annotation and ft options", true, func(s *rayv1.RayClusterSpec, md *metav1.ObjectMeta) {
		annotate(md, "ray.io/ft-enabled", "true")
		s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	}},
	{"redis address without ft", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		headEnv(s, "RAY_REDIS_ADDRESS", "redis:6379")
	}},
	{"redis address with the ft annotation", false, func(s *rayv1.RayClusterSpec, md *metav1.ObjectMeta) {
		annotate(md, "ray.io/ft-enabled", "TRUE")
		headEnv(s, "RAY_REDIS_ADDRESS", "redis:6379")
	}},
	{"ft options and redis-password", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		params(&s.HeadGroupSpec.RayStartParams)["redis-password"] = "x"
	}},
	{"ft options and REDIS_PASSWORD", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		headEnv(s, "REDIS_PASSWORD", "x")
	}},
	{"ft options and external storage annotation", true, func(s *rayv1.RayClusterSpec, md *metav1.ObjectMeta) {
		s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		annotate(md, "ray.io/external-storage-namespace", "ns")
	}},
	{"ft options alone", false, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	}},
	{"redis username param", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		params(&s.HeadGroupSpec.RayStartParams)["redis-username"] = "u"
	}},
	{"redis username env", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) { headEnv(s, "REDIS_USERNAME", "u") }},
	{"suspended worker group", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		t := true
		firstWorker(s).Suspend = &t
	}},
	{"autoscaler v2 env without autoscaling", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, false)
		headEnv(s, "RAY_enable_autoscaler_v2", "1")
	}},
	{"autoscaler v2 env 0 without autoscaling", false, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, false)
		headEnv(s, "RAY_enable_autoscaler_v2", "0")
	}},
	{"autoscaler version and v2 env", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, true)
		s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
		headEnv(s, "RAY_enable_autoscaler_v2", "1")
	}},
	{"autoscaler v2 with a restarting head", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, true)
		s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
		s.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}},
	{"autoscaler v2 with a restarting worker", true, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, true)
		s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
		firstWorker(s).Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}},
	{"autoscaler v2", false, func(s *rayv1.RayClusterSpec, _ *metav1.ObjectMeta) {
		autoscaling(s, true)
		s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
	}},
}
