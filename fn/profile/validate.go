package profile

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tree"
)

// Enumerations are case-sensitive, as in nrl-k8s (`KAI` is rejected).
// Names a profile writes whose meaning the later stages share.
const (
	// ComputeDomainClaim and RoCEClaim are the resourceClaims names a worker
	// pod uses to ask for the DRA objects the build stage creates.
	ComputeDomainClaim = "compute-domain-channel"
	RoCEClaim          = "roce-channel"
	// RecipeSourceConfigMap (launch.recipeSource) ships the checked recipe
	// in a ConfigMap mounted into the head pod at RecipeMountPath, where
	// every --config then points.
	RecipeSourceConfigMap = "configMap"
	RecipeMountPath       = "/etc/nemo-rl/recipe/recipe.yaml"
)

var (
	SchedulerKinds  = []string{"kai", "kueue", "default"}
	WorkspaceKinds  = []string{"lustre", "pvc", "hostPath", "rayUpload", "auto"}
	HFCacheKinds    = []string{"lustre", "pvc", "emptyDir", "none"}
	CheckpointKinds = []string{"lustre", "pvc", "none"}
	SubmitKinds     = []string{"sdk", "rayjob"}
	PortForwards    = []string{"kubectl-ray-plugin", "kubectl-port-forward", "auto"}
	DevPodModes     = []string{"auto", "required", "skip"}
	Submitters      = []string{"portForward", "exec"}
	LaunchModes     = []string{"single", "rayjob", "attach", "bringup"}
	RunModes        = []string{"interactive", "batch"}
	CodeSources     = []string{"upload", "image", "lustre"}
	RecipeSources   = []string{"checkout", RecipeSourceConfigMap}
	NCCLNets        = []string{"Socket", "IB", "OFI"}
	Operators       = []string{"Equal", "Exists"}
	Effects         = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	SubmissionModes = []string{"HTTPMode", "K8sJobMode", "SidecarMode", "InteractiveMode"}
	// PodSecurityLevels are Pod Security's levels (fn/podsecurity.Levels).
	PodSecurityLevels = []string{"privileged", "baseline", "restricted"}
)

func oneOf(ds *diag.List, file, field, got string, allowed []string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	ds.Errorf(file, field, "found %q; expected one of %s", got, strings.Join(allowed, ", "))
}

// validate applies the schema rules that types alone do not express.
func validate(file string, in *Infra) diag.List {
	var ds diag.List
	if strings.TrimSpace(in.Namespace) == "" {
		ds.Errorf(file, "namespace", "must not be empty")
	}
	if strings.TrimSpace(in.Image) == "" {
		ds.Errorf(file, "image", "must not be empty; expected a container image reference")
	}
	if in.PodSecurity != nil {
		oneOf(&ds, file, "podSecurity", *in.PodSecurity, PodSecurityLevels)
	}
	oneOf(&ds, file, "scheduler.kind", in.Scheduler.Kind, SchedulerKinds)
	if (in.Scheduler.Kind == "kai" || in.Scheduler.Kind == "kueue") && (in.Scheduler.Queue == nil || *in.Scheduler.Queue == "") {
		ds.Errorf(file, "scheduler.queue", "infra.scheduler.queue is required when scheduler.kind=%s", in.Scheduler.Kind)
	}
	for i, t := range in.Placement.Tolerations {
		f := fmt.Sprintf("placement.tolerations[%d]", i)
		if t.Key == "" {
			ds.Errorf(file, f+".key", "is required")
		}
		if t.Operator == "" {
			in.Placement.Tolerations[i].Operator = "Equal"
		} else {
			oneOf(&ds, file, f+".operator", t.Operator, Operators)
		}
		if t.Effect == "" {
			in.Placement.Tolerations[i].Effect = "NoSchedule"
		} else {
			oneOf(&ds, file, f+".effect", t.Effect, Effects)
		}
	}
	if in.Networking.NCCLNet != nil {
		oneOf(&ds, file, "networking.nccl_net", *in.Networking.NCCLNet, NCCLNets)
	}
	oneOf(&ds, file, "workspace.kind", in.Workspace.Kind, WorkspaceKinds)
	if (in.Workspace.Kind == "lustre" || in.Workspace.Kind == "pvc") && empty(in.Workspace.PVCName) {
		ds.Errorf(file, "workspace.pvcName", "infra.workspace.pvcName is required when kind=%s", in.Workspace.Kind)
	}
	if in.Workspace.Kind == "hostPath" && empty(in.Workspace.HostPath) {
		ds.Errorf(file, "workspace.hostPath", "infra.workspace.hostPath is required when kind=hostPath")
	}
	oneOf(&ds, file, "hf_cache.kind", in.HFCache.Kind, HFCacheKinds)
	if (in.HFCache.Kind == "lustre" || in.HFCache.Kind == "pvc") && empty(in.HFCache.PVCName) {
		ds.Errorf(file, "hf_cache.pvcName", "infra.hf_cache.pvcName is required when kind=%s", in.HFCache.Kind)
	}
	oneOf(&ds, file, "checkpoints.kind", in.Checkpoints.Kind, CheckpointKinds)
	if (in.Checkpoints.Kind == "lustre" || in.Checkpoints.Kind == "pvc") && empty(in.Checkpoints.PVCName) {
		ds.Errorf(file, "checkpoints.pvcName", "infra.checkpoints.pvcName is required when kind=%s", in.Checkpoints.Kind)
	}
	oneOf(&ds, file, "submit.kind", in.Submit.Kind, SubmitKinds)
	oneOf(&ds, file, "submit.portForward", in.Submit.PortForward, PortForwards)
	oneOf(&ds, file, "submit.devPod", in.Submit.DevPod, DevPodModes)
	oneOf(&ds, file, "submit.submitter", in.Submit.Submitter, Submitters)
	oneOf(&ds, file, "launch.mode", in.Launch.Mode, LaunchModes)
	oneOf(&ds, file, "launch.runMode", in.Launch.RunMode, RunModes)
	oneOf(&ds, file, "launch.codeSource", in.Launch.CodeSource, CodeSources)
	oneOf(&ds, file, "launch.recipeSource", in.Launch.RecipeSource, RecipeSources)
	if in.Launch.Mode == "attach" && empty(in.Launch.Attach.Generation) && empty(in.Launch.Attach.Gym) && empty(in.Launch.Attach.Training) {
		ds.Errorf(file, "launch.attach", "infra.launch.mode=attach requires at least one of infra.launch.attach.{generation,gym,training}")
	}
	if (in.Launch.CodeSource == "image" || in.Launch.CodeSource == "lustre") && empty(in.Launch.CodePath) {
		ds.Errorf(file, "launch.codePath", "infra.launch.codePath is required when codeSource=%s", in.Launch.CodeSource)
	}
	oneOf(&ds, file, "launch.rayjob.submissionMode", in.Launch.RayJob.SubmissionMode, SubmissionModes)
	if in.Launch.RayJob.TTLSecondsAfterFinished < 0 {
		ds.Errorf(file, "launch.rayjob.ttlSecondsAfterFinished", "found %d; expected 0 or more seconds", in.Launch.RayJob.TTLSecondsAfterFinished)
	}
	validateDRA(&ds, file, "dra", &in.DRA)
	for _, rc := range in.Kuberay.ByRole() {
		f := "kuberay." + rc.Role
		c := rc.Cluster
		if strings.TrimSpace(c.Name) == "" {
			ds.Errorf(file, f+".name", "is required; expected the RayCluster name")
		}
		if c.Spec == nil {
			ds.Errorf(file, f+".spec", "is required; expected a RayCluster spec")
		}
		if c.SegmentSize != nil && *c.SegmentSize <= 0 {
			ds.Errorf(file, f+".segmentSize", "found %d; expected an integer greater than 0", *c.SegmentSize)
		}
		if c.Spec != nil {
			validateCounts(&ds, file, f+".spec", c.Spec)
		}
		if c.Daemon != nil && strings.TrimSpace(c.Daemon.Entrypoint) == "" {
			ds.Errorf(file, f+".daemon.entrypoint", "is required when daemon is set")
		}
		if c.DRA != nil {
			validateDRA(&ds, file, f+".dra", c.DRA)
		}
	}
	for _, k := range tree.SortedKeys(in.Deployments) {
		d := in.Deployments[k]
		f := "deployments." + k
		if d == nil {
			ds.Errorf(file, f, "is null; expected a deployment with name and spec")
			continue
		}
		if strings.TrimSpace(d.Name) == "" {
			ds.Errorf(file, f+".name", "is required; expected the Deployment name")
		}
		if d.Spec == nil {
			ds.Errorf(file, f+".spec", "is required; expected a Deployment spec")
		}
	}
	return ds
}

// validateCounts refuses negative worker counts here, with the profile's
// field path, before any capacity arithmetic reads them.
func validateCounts(ds *diag.List, file, f string, spec *rayv1.RayClusterSpec) {
	for i, g := range spec.WorkerGroupSpecs {
		gf := fmt.Sprintf("%s.workerGroupSpecs[%d]", f, i)
		for _, c := range []struct {
			name string
			v    *int32
		}{{"replicas", g.Replicas}, {"minReplicas", g.MinReplicas}, {"maxReplicas", g.MaxReplicas}, {"numOfHosts", &g.NumOfHosts}} {
			if c.v != nil && *c.v < 0 {
				ds.Errorf(file, gf+"."+c.name, "found %d; expected 0 or more", *c.v)
			}
		}
	}
}

func validateDRA(ds *diag.List, file, f string, d *DRA) {
	if d.RoCE != nil && d.RoCE.Count != nil && *d.RoCE.Count <= 0 {
		ds.Errorf(file, f+".roce.count", "found %d; expected at least 1 device", *d.RoCE.Count)
	}
	if d.RoCE != nil && d.RoCE.DeviceClassName != nil && *d.RoCE.DeviceClassName == "" {
		ds.Errorf(file, f+".roce.deviceClassName", "must not be empty")
	}
	if d.ComputeDomain != nil && d.ComputeDomain.NumNodes != nil && *d.ComputeDomain.NumNodes < 0 {
		ds.Errorf(file, f+".computeDomain.numNodes", "found %d; expected 0 (follow the pods) or more", *d.ComputeDomain.NumNodes)
	}
}

func empty(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// EffectiveDRA merges a cluster's DRA settings over the profile's (whose
// defaults, nrl-k8s's hard-coded 8 and roce.networking.k8s.aws, come from
// defaults.yaml).
func (in *Infra) EffectiveDRA(c *Cluster) (roceCount int64, roceClass string, cdNodes int64) {
	apply := func(d *DRA) {
		if d == nil {
			return
		}
		if d.RoCE != nil && d.RoCE.Count != nil {
			roceCount = int64(*d.RoCE.Count)
		}
		if d.RoCE != nil && d.RoCE.DeviceClassName != nil {
			roceClass = *d.RoCE.DeviceClassName
		}
		if d.ComputeDomain != nil && d.ComputeDomain.NumNodes != nil {
			cdNodes = int64(*d.ComputeDomain.NumNodes)
		}
	}
	apply(&in.DRA)
	apply(c.DRA)
	return
}
