package profile

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Enumerations are case-sensitive, as in nrl-k8s (`KAI` is rejected).
// Names a profile writes whose meaning the later stages share.
const (
	// RecipeSourceConfigMap (launch.recipeSource) ships the checked recipe
	// in a ConfigMap mounted into the head pod at RecipeMountPath, where
	// every --config then points.
	RecipeSourceConfigMap = "configMap"
	RecipeMountPath       = "/etc/nemo-rl/recipe/recipe.yaml"
)

var (
	SchedulerKinds  = registry.Kinds()
	DispatchModes   = registry.DispatchModes()
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
	// PodSecurityLevels are Pod Security's levels (fn/analyse/podsecurity.Levels).
	PodSecurityLevels = []string{"privileged", "baseline", "restricted"}
)

// EnvNamePattern is what an env name must match (env, launch.env): a
// shell variable name, so it can also be exported in an entrypoint.
const EnvNamePattern = `^[A-Za-z_][A-Za-z0-9_]*$`

// EnvNameRE is EnvNamePattern compiled.
var EnvNameRE = regexp.MustCompile(EnvNamePattern)

func oneOf(ds *diag.List, file, field, got string, allowed []string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	ds.Errorf(file, field, "found %q; expected one of %s", got, strings.Join(allowed, ", "))
}

// applyDefaults fills what a profile may leave out and the rendered objects
// need: a toleration's operator (Equal) and effect (NoSchedule), as the API
// server would read them.
func applyDefaults(in *Infra) {
	for i := range in.Placement.Tolerations {
		t := &in.Placement.Tolerations[i]
		if t.Operator == "" {
			t.Operator = "Equal"
		}
		if t.Effect == "" {
			t.Effect = "NoSchedule"
		}
	}
}

// validate applies the schema rules that types alone do not express, to a
// profile whose defaults are applied; it only reports.
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
	validateScheduling(&ds, file, in)
	validateStorage(&ds, file, in)
	validateLaunch(&ds, file, in)
	validateClusters(&ds, file, in)
	return ds
}

// validateScheduling: the scheduler, its queue and priority class, node
// selection and tolerations, and the variables every pod gets.
func validateScheduling(ds *diag.List, file string, in *Infra) {
	oneOf(ds, file, "scheduler.kind", in.Scheduler.Kind, SchedulerKinds)
	// Each scheduler judges the keys it owns (fn/scheduler/...).
	registry.Validate(in.SchedulerView(), reporter{ds, file})
	validateDevMount(ds, file, in)
	for _, k := range tree.SortedKeys(in.Placement.NodeSelector) {
		for _, e := range validation.IsQualifiedName(k) {
			ds.Errorf(file, "placement.nodeSelector."+k, "key %q: expected a node label key: %s", k, e)
		}
		for _, e := range validation.IsValidLabelValue(in.Placement.NodeSelector[k]) {
			ds.Errorf(file, "placement.nodeSelector."+k, "found %q; expected a node label value: %s", in.Placement.NodeSelector[k], e)
		}
	}
	if pc := in.Scheduler.PriorityClassName; pc != nil {
		for _, e := range validation.IsDNS1123Subdomain(*pc) {
			ds.Errorf(file, "scheduler.priorityClassName", "found %q; expected a PriorityClass name (DNS-1123 subdomain): %s", *pc, e)
		}
	}
	for _, k := range tree.SortedKeys(in.Env) {
		if !EnvNameRE.MatchString(k) {
			ds.Errorf(file, "env."+k, "is not a shell variable name; expected %s", EnvNamePattern)
		}
	}
	for i, t := range in.Placement.Tolerations {
		f := fmt.Sprintf("placement.tolerations[%d]", i)
		if t.Key == "" {
			ds.Errorf(file, f+".key", "is required")
		}
		oneOf(ds, file, f+".operator", t.Operator, Operators)
		oneOf(ds, file, f+".effect", t.Effect, Effects)
		// The API server's own toleration rules (ValidateTolerations).
		if t.Operator == "Exists" && t.Value != nil && *t.Value != "" {
			ds.Errorf(file, f+".value", "is %q with operator Exists; expected no value (Exists matches any value of the key)", *t.Value)
		}
		if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
			ds.Errorf(file, f+".tolerationSeconds", "is set with effect %s; expected effect NoExecute (only a NoExecute taint evicts after a time)", t.Effect)
		}
	}
}

// validateStorage: the networking choice and every volume the profile names.
func validateStorage(ds *diag.List, file string, in *Infra) {
	if in.Networking.NCCLNet != nil {
		oneOf(ds, file, "networking.nccl_net", *in.Networking.NCCLNet, NCCLNets)
	}
	oneOf(ds, file, "workspace.kind", in.Workspace.Kind, WorkspaceKinds)
	if (in.Workspace.Kind == "lustre" || in.Workspace.Kind == "pvc") && empty(in.Workspace.PVCName) {
		ds.Errorf(file, "workspace.pvcName", "infra.workspace.pvcName is required when kind=%s", in.Workspace.Kind)
	}
	if in.Workspace.Kind == "hostPath" && empty(in.Workspace.HostPath) {
		ds.Errorf(file, "workspace.hostPath", "infra.workspace.hostPath is required when kind=hostPath")
	}
	oneOf(ds, file, "hf_cache.kind", in.HFCache.Kind, HFCacheKinds)
	if (in.HFCache.Kind == "lustre" || in.HFCache.Kind == "pvc") && empty(in.HFCache.PVCName) {
		ds.Errorf(file, "hf_cache.pvcName", "infra.hf_cache.pvcName is required when kind=%s", in.HFCache.Kind)
	}
	oneOf(ds, file, "checkpoints.kind", in.Checkpoints.Kind, CheckpointKinds)
	if (in.Checkpoints.Kind == "lustre" || in.Checkpoints.Kind == "pvc") && empty(in.Checkpoints.PVCName) {
		ds.Errorf(file, "checkpoints.pvcName", "infra.checkpoints.pvcName is required when kind=%s", in.Checkpoints.Kind)
	}
	validateSubPath(ds, file, "hf_cache", in.HFCache)
	validateSubPath(ds, file, "checkpoints", in.Checkpoints)
}

// validateLaunch: how the run is submitted and launched.
func validateLaunch(ds *diag.List, file string, in *Infra) {
	oneOf(ds, file, "submit.kind", in.Submit.Kind, SubmitKinds)
	oneOf(ds, file, "submit.portForward", in.Submit.PortForward, PortForwards)
	oneOf(ds, file, "submit.devPod", in.Submit.DevPod, DevPodModes)
	oneOf(ds, file, "submit.submitter", in.Submit.Submitter, Submitters)
	oneOf(ds, file, "launch.mode", in.Launch.Mode, LaunchModes)
	oneOf(ds, file, "launch.runMode", in.Launch.RunMode, RunModes)
	oneOf(ds, file, "launch.codeSource", in.Launch.CodeSource, CodeSources)
	oneOf(ds, file, "launch.recipeSource", in.Launch.RecipeSource, RecipeSources)
	if in.Launch.Mode == "attach" && empty(in.Launch.Attach.Generation) && empty(in.Launch.Attach.Gym) && empty(in.Launch.Attach.Training) {
		ds.Errorf(file, "launch.attach", "infra.launch.mode=attach requires at least one of infra.launch.attach.{generation,gym,training}")
	}
	if (in.Launch.CodeSource == "image" || in.Launch.CodeSource == "lustre") && empty(in.Launch.CodePath) {
		ds.Errorf(file, "launch.codePath", "infra.launch.codePath is required when codeSource=%s", in.Launch.CodeSource)
	}
	oneOf(ds, file, "launch.rayjob.submissionMode", in.Launch.RayJob.SubmissionMode, SubmissionModes)
	if ttl := in.Launch.RayJob.TTLSecondsAfterFinished; ttl < 0 || ttl > math.MaxInt32 {
		ds.Errorf(file, "launch.rayjob.ttlSecondsAfterFinished", "found %d; expected 0 to %d seconds", ttl, math.MaxInt32)
	}
	// The RayJob field is an int32: a larger value would wrap (2^32+1 is one second).
	if ads := in.Launch.RayJob.ActiveDeadlineSeconds; ads != nil && *ads > math.MaxInt32 {
		ds.Errorf(file, "launch.rayjob.activeDeadlineSeconds", "found %d; expected at most %d seconds", *ads, math.MaxInt32)
	}
}

// validateClusters: DRA, each RayCluster and each Deployment.
func validateClusters(ds *diag.List, file string, in *Infra) {
	validateDRA(ds, file, "dra", &in.DRA)
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
			validateCounts(ds, file, f+".spec", c.Spec)
		}
		if c.Daemon != nil && strings.TrimSpace(c.Daemon.Entrypoint) == "" {
			ds.Errorf(file, f+".daemon.entrypoint", "is required when daemon is set")
		}
		if c.DRA != nil {
			validateDRA(ds, file, f+".dra", c.DRA)
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
	if d.InfiniBand != nil && d.InfiniBand.Count != nil && *d.InfiniBand.Count <= 0 {
		ds.Errorf(file, f+".infiniband.count", "found %d; expected at least 1 device", *d.InfiniBand.Count)
	}
	if d.InfiniBand != nil && d.InfiniBand.DeviceClassName != nil && *d.InfiniBand.DeviceClassName == "" {
		ds.Errorf(file, f+".infiniband.deviceClassName", "must not be empty")
	}
	if d.ComputeDomain != nil && d.ComputeDomain.NumNodes != nil && *d.ComputeDomain.NumNodes < 0 {
		ds.Errorf(file, f+".computeDomain.numNodes", "found %d; expected 0 (follow the pods) or more", *d.ComputeDomain.NumNodes)
	}
}

// validateSubPath: a subPath names a directory inside the volume's claim, as
// the API server requires (relative, no ".." element), and only a claim has
// one to name.
func validateSubPath(ds *diag.List, file, f string, v Volume) {
	if v.SubPath == nil {
		return
	}
	p := *v.SubPath
	if v.Kind != "pvc" && v.Kind != "lustre" {
		ds.Errorf(file, f+".subPath", "is set but %s.kind is %s; expected kind pvc or lustre (a subPath is a directory of the claim)", f, v.Kind)
		return
	}
	bad := strings.TrimSpace(p) == "" || strings.HasPrefix(p, "/")
	for _, el := range strings.Split(p, "/") {
		bad = bad || el == ".."
	}
	if bad {
		ds.Errorf(file, f+".subPath", "found %q; expected a relative path inside the claim without \"..\" (e.g. ${user:}/hf-cache)", p)
	}
}

func empty(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// NICRequest is one NIC claim's effective request; 0 and "" are unset.
type NICRequest struct {
	Count int64
	Class string
}

// DRASettings are a cluster's effective DRA settings.
type DRASettings struct {
	RoCE, InfiniBand NICRequest
	CDNodes          int64
}

// EffectiveDRA merges a cluster's DRA settings over the profile's (whose
// RoCE defaults, nrl-k8s's hard-coded 8 and roce.networking.k8s.aws, come
// from defaults.yaml; InfiniBand has none).
func (in *Infra) EffectiveDRA(c *Cluster) DRASettings {
	var out DRASettings
	nic := func(r *RoCE, into *NICRequest) {
		if r == nil {
			return
		}
		if r.Count != nil {
			into.Count = int64(*r.Count)
		}
		if r.DeviceClassName != nil {
			into.Class = *r.DeviceClassName
		}
	}
	apply := func(d *DRA) {
		if d == nil {
			return
		}
		nic(d.RoCE, &out.RoCE)
		nic(d.InfiniBand, &out.InfiniBand)
		if d.ComputeDomain != nil && d.ComputeDomain.NumNodes != nil {
			out.CDNodes = int64(*d.ComputeDomain.NumNodes)
		}
	}
	apply(&in.DRA)
	if c != nil {
		apply(c.DRA)
	}
	return out
}

// DevClaim is the PVC the dev pod mounts as its workspace and the profile
// key it comes from; Claim "" means the profile names none.
type DevClaim struct {
	Claim, From string
}

// DevWorkspaceClaim finds the dev pod's workspace claim in the profile, and
// nowhere else (nrl-k8s hard-codes `rl-workspace`, a claim of one cluster):
// dev.pvcName; else workspace.pvcName (kind pvc or lustre); else the one
// PersistentVolumeClaim the profile's Ray pods mount (the shared workspace
// of the shipped GB300 profiles). Several claims and no dev.pvcName is
// ambiguous: none is picked.
func DevWorkspaceClaim(in *Infra) DevClaim {
	switch {
	case in.Dev.PVCName != "":
		return DevClaim{in.Dev.PVCName, "dev.pvcName"}
	case (in.Workspace.Kind == "pvc" || in.Workspace.Kind == "lustre") && in.Workspace.PVCName != nil:
		return DevClaim{*in.Workspace.PVCName, "workspace.pvcName"}
	}
	claims := map[string]bool{}
	var first string
	for _, sp := range rayPodSpecs(in) {
		for _, v := range sp.Volumes {
			if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
				claims[v.PersistentVolumeClaim.ClaimName] = true
				if first == "" {
					first = v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	if len(claims) == 1 {
		return DevClaim{first, "the one PersistentVolumeClaim the profile's Ray pods mount"}
	}
	return DevClaim{}
}

// rayPodSpecs are the pod specs of every cluster's head and worker groups,
// in role order.
func rayPodSpecs(in *Infra) []*corev1.PodSpec {
	var specs []*corev1.PodSpec
	for _, rc := range in.Kuberay.ByRole() {
		if rc.Cluster.Spec == nil {
			continue
		}
		specs = append(specs, &rc.Cluster.Spec.HeadGroupSpec.Template.Spec)
		for i := range rc.Cluster.Spec.WorkerGroupSpecs {
			specs = append(specs, &rc.Cluster.Spec.WorkerGroupSpecs[i].Template.Spec)
		}
	}
	return specs
}

// DevWorkspacePath is nrl-k8s's dev pod mount path, used when neither
// dev.mountPath nor the Ray pods say where the claim belongs.
const DevWorkspacePath = "/mnt/rl-workspace"

// DevMount is where the dev pod mounts its claim, and why.
type DevMount struct{ Path, From string }

// DevMountPath: dev.mountPath; else where the profile's Ray pods mount the
// dev pod's claim (so paths printed by a run, checkpoints and logs, mean
// the same in the dev pod); else nrl-k8s's /mnt/rl-workspace.
func DevMountPath(in *Infra) DevMount {
	if in.Dev.MountPath != "" {
		return DevMount{in.Dev.MountPath, "dev.mountPath"}
	}
	if c := DevWorkspaceClaim(in); c.Claim != "" {
		for _, sp := range rayPodSpecs(in) {
			for _, v := range sp.Volumes {
				if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != c.Claim {
					continue
				}
				for _, ctr := range sp.Containers {
					for _, m := range ctr.VolumeMounts {
						if m.Name == v.Name && m.SubPath == "" {
							return DevMount{m.MountPath, "where the profile's Ray pods mount " + c.Claim}
						}
					}
				}
			}
		}
	}
	return DevMount{DevWorkspacePath, "nrl-k8s's dev pod path"}
}

// validateDevMount: dev.mountPath is an absolute, clean path.
func validateDevMount(ds *diag.List, file string, in *Infra) {
	m := in.Dev.MountPath
	if m != "" && (!path.IsAbs(m) || path.Clean(m) != m || m == "/") {
		ds.Errorf(file, "dev.mountPath", "found %q; expected an absolute, clean path other than / (e.g. /mnt/nfs)", m)
	}
}

// reporter reports a scheduler integration's errors in the profile file.
type reporter struct {
	ds   *diag.List
	file string
}

func (r reporter) Errorf(field, format string, args ...any) {
	r.ds.Errorf(r.file, field, format, args...)
}
