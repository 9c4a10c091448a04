package check

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// KubeRay v1.5.0's admission rules (controllers/ray/utils, validation.go:
// ValidateRayJobMetadata/Spec, ValidateRayClusterMetadata/Spec), the code its
// operator runs before it acts on an object.
//
// Why a restatement and not a call: linking that package pulls in
// client-go's scheme and controller-runtime, whose package init costs every
// nrl-k8s process about 11 ms (measured: README render 15 → 27 ms median, over
// the 25 ms budget). So KubeRay's own functions are the oracle in tests
// instead (kuberay_oracle_test.go): over every golden, example, shipped
// profile and a table of single-defect mutations, these rules must refuse
// exactly what KubeRay refuses. A KubeRay upgrade that adds a rule fails that
// test until the rule is added here.
const (
	MaxRayClusterName = 53                    // utils.MaxRayClusterNameLength
	MaxRayJobName     = MaxRayClusterName - 6 // utils.MaxRayJobNameLength

	envRayRedisAddress = "RAY_REDIS_ADDRESS"
	envRedisPassword   = "REDIS_PASSWORD"
	envRedisUsername   = "REDIS_USERNAME"
	envAutoscalerV2    = "RAY_enable_autoscaler_v2"
)

// KubeRayRules returns every KubeRay admission rule obj breaks (KubeRay stops at the
// first; a reviewer is better served by all of them).
func KubeRayRules(obj any) []string {
	switch t := obj.(type) {
	case *rayv1.RayJob:
		return append(rayNameRules("RayJob", t.Name, MaxRayJobName), rayJobSpecRules(t)...)
	case *rayv1.RayCluster:
		return append(rayNameRules("RayCluster", t.Name, MaxRayClusterName), rayClusterSpecRules(&t.Spec, t.Annotations)...)
	}
	return nil
}

func rayNameRules(kind, name string, limit int) []string {
	var errs []string
	if len(name) > limit {
		errs = append(errs, fmt.Sprintf("%s name %q has %d characters; expected at most %d", kind, name, len(name), limit))
	}
	for _, e := range validation.IsDNS1035Label(name) {
		errs = append(errs, fmt.Sprintf("%s name %q is not a DNS-1035 label: %s", kind, name, e))
	}
	return errs
}

func rayJobSpecRules(j *rayv1.RayJob) []string {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	s := &j.Spec
	selector := len(s.ClusterSelector) != 0
	if s.Suspend && !s.ShutdownAfterJobFinishes {
		add("spec.suspend needs spec.shutdownAfterJobFinishes: true")
	}
	if s.TTLSecondsAfterFinished < 0 {
		add("spec.ttlSecondsAfterFinished is %d; expected a non-negative integer", s.TTLSecondsAfterFinished)
	}
	if !s.ShutdownAfterJobFinishes && s.TTLSecondsAfterFinished > 0 {
		add("spec.ttlSecondsAfterFinished is %d with shutdownAfterJobFinishes false; a TTL needs shutdownAfterJobFinishes: true", s.TTLSecondsAfterFinished)
	}
	if s.DeletionStrategy != nil {
		// KubeRay's RayJobDeletionPolicy feature gate is alpha and off by default.
		add("spec.deletionStrategy needs KubeRay's RayJobDeletionPolicy feature gate (alpha, off by default)")
	}
	if s.Suspend && selector {
		add("spec.suspend is not supported with spec.clusterSelector")
	}
	if s.RayClusterSpec == nil && !selector {
		add("one of spec.rayClusterSpec or spec.clusterSelector must be set")
	}
	if selector {
		if s.ClusterSelector[vocab.RayClusterLabel] == "" {
			add("spec.clusterSelector[%s] must name the cluster", vocab.RayClusterLabel)
		}
		if s.SubmissionMode == rayv1.SidecarMode {
			add("spec.clusterSelector is not supported with submissionMode SidecarMode")
		}
	}
	if s.SubmissionMode == rayv1.InteractiveMode && s.BackoffLimit != nil && *s.BackoffLimit > 0 {
		add("spec.backoffLimit is not supported with submissionMode InteractiveMode")
	}
	if s.SubmissionMode == rayv1.SidecarMode {
		if s.SubmitterPodTemplate != nil {
			add("spec.submitterPodTemplate is not supported with submissionMode SidecarMode")
		}
		if s.SubmitterConfig != nil {
			add("spec.submitterConfig is not supported with submissionMode SidecarMode")
		}
		if s.RayClusterSpec != nil {
			if rp := s.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
				add("head restartPolicy is %q; SidecarMode needs Never or unset", rp)
			}
		}
	}
	if s.RayClusterSpec != nil {
		errs = append(errs, rayClusterSpecRules(s.RayClusterSpec, j.Annotations)...)
	}
	if s.RuntimeEnvYAML != "" {
		var env map[string]any
		if err := yaml.Unmarshal([]byte(s.RuntimeEnvYAML), &env); err != nil {
			add("spec.runtimeEnvYAML is not a YAML mapping: %v", err)
		}
	}
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds <= 0 {
		add("spec.activeDeadlineSeconds is %d; expected a positive integer", *s.ActiveDeadlineSeconds)
	}
	if s.BackoffLimit != nil && *s.BackoffLimit < 0 {
		add("spec.backoffLimit is %d; expected a non-negative integer", *s.BackoffLimit)
	}
	return errs
}

func rayClusterSpecRules(spec *rayv1.RayClusterSpec, annotations map[string]string) []string {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	head := spec.HeadGroupSpec
	if len(head.Template.Spec.Containers) == 0 {
		add("headGroupSpec has no container; expected at least one")
		return errs // every rule below reads the head's Ray container
	}
	errs = append(errs, rayGroupRules("headGroupSpec", head.RayStartParams, head.Resources, head.Labels)...)
	for i, g := range spec.WorkerGroupSpecs {
		where := fmt.Sprintf("workerGroupSpecs[%d] (%s)", i, g.GroupName)
		if len(g.Template.Spec.Containers) == 0 {
			add("%s has no container; expected at least one", where)
		}
		errs = append(errs, rayGroupRules(where, g.RayStartParams, g.Resources, g.Labels)...)
	}
	if annotations[vocab.RayFTEnabledAnnotation] != "" && spec.GcsFaultToleranceOptions != nil {
		add("annotation %s and gcsFaultToleranceOptions are both set; use gcsFaultToleranceOptions only", vocab.RayFTEnabledAnnotation)
	}
	headEnv := head.Template.Spec.Containers[0].Env
	ftEnabled := strings.ToLower(annotations[vocab.RayFTEnabledAnnotation]) == "true" || spec.GcsFaultToleranceOptions != nil
	if !ftEnabled && hasEnv(headEnv, envRayRedisAddress) {
		add("head env %s enables GCS fault tolerance implicitly; set gcsFaultToleranceOptions instead", envRayRedisAddress)
	}
	if spec.GcsFaultToleranceOptions != nil {
		if head.RayStartParams["redis-password"] != "" {
			add("headGroupSpec.rayStartParams[redis-password] with gcsFaultToleranceOptions; use gcsFaultToleranceOptions.redisPassword")
		}
		for _, name := range []string{envRedisPassword, envRayRedisAddress} {
			if hasEnv(headEnv, name) {
				add("head env %s with gcsFaultToleranceOptions; set it in gcsFaultToleranceOptions", name)
			}
		}
		if annotations[vocab.RayExternalStorageNamespaceAnnotation] != "" {
			add("annotation %s with gcsFaultToleranceOptions; use gcsFaultToleranceOptions.externalStorageNamespace", vocab.RayExternalStorageNamespaceAnnotation)
		}
	}
	if head.RayStartParams["redis-username"] != "" || hasEnv(headEnv, envRedisUsername) {
		add("a redis username in headGroupSpec.rayStartParams or head env; use gcsFaultToleranceOptions.redisUsername")
	}
	// Worker group suspension needs KubeRay's alpha RayJobDeletionPolicy gate,
	// off by default.
	for i, g := range spec.WorkerGroupSpecs {
		if g.Suspend != nil && *g.Suspend {
			add("workerGroupSpecs[%d] (%s) is suspended; KubeRay allows that only with its RayJobDeletionPolicy feature gate (alpha, off by default)", i, g.GroupName)
		}
	}
	autoscaling := spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling
	v2env, hasV2env := envValue(headEnv, envAutoscalerV2)
	if !autoscaling && hasV2env && (v2env == "1" || v2env == "true") {
		add("head env %s=%s needs enableInTreeAutoscaling: true", envAutoscalerV2, v2env)
	}
	if autoscaling {
		if spec.AutoscalerOptions != nil && spec.AutoscalerOptions.Version != nil && hasV2env {
			add("both autoscalerOptions.version and head env %s are set; use autoscalerOptions.version", envAutoscalerV2)
		}
		if spec.AutoscalerOptions != nil && spec.AutoscalerOptions.Version != nil && *spec.AutoscalerOptions.Version == rayv1.AutoscalerVersionV2 {
			if rp := head.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
				add("head restartPolicy is %q; autoscaler v2 needs Never or unset", rp)
			}
			for i, g := range spec.WorkerGroupSpecs {
				if rp := g.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
					add("workerGroupSpecs[%d] (%s) restartPolicy is %q; autoscaler v2 needs Never or unset", i, g.GroupName, rp)
				}
			}
		}
	}
	return errs
}

// rayGroupRules: resources come from rayStartParams or the group's
// `resources`, not both; labels from the group's `labels`, as label syntax.
func rayGroupRules(where string, params, resources, labels map[string]string) []string {
	var errs []string
	if (params["num-cpus"] != "" || params["num-gpus"] != "" || params["memory"] != "" || params["resources"] != "") && len(resources) > 0 {
		errs = append(errs, fmt.Sprintf("%s sets resources in both rayStartParams and resources; use one", where))
	}
	if _, ok := params["labels"]; ok {
		errs = append(errs, fmt.Sprintf("%s.rayStartParams[labels] is not supported; use the group's labels field", where))
	}
	for _, k := range tree.SortedKeys(labels) {
		v := labels[k]
		for _, e := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Sprintf("%s label key %q: %s", where, k, e))
		}
		for _, e := range validation.IsValidLabelValue(v) {
			errs = append(errs, fmt.Sprintf("%s label %s value %q: %s", where, k, v, e))
		}
	}
	return errs
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	_, ok := envValue(env, name)
	return ok
}

func envValue(env []corev1.EnvVar, name string) (string, bool) {
	for _, e := range env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}
