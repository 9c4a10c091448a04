// Package profile is the typed infra profile (docs/nrl-k8s.md §3): every
// key nrl-k8s accepts, with its defaults, plus the few we add (DRA device
// settings, RayJob knobs, dev pod). Embedded Kubernetes specs decode into
// the real KubeRay / Kubernetes types so a typo inside them is caught too.
package profile

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Roles are fixed and always processed in this order (nrl-k8s rule).
var Roles = []string{"generation", "gym", "training"}

// Infra is the whole profile.
type Infra struct {
	Namespace        string   `json:"namespace"`
	Image            string   `json:"image"`
	ImagePullSecrets []string `json:"imagePullSecrets"`
	RayVersion       *string  `json:"rayVersion"`
	ServiceAccount   *string  `json:"serviceAccount"`
	// Ours: the Pod Security level the target namespace enforces (null: not
	// known, no constraint); check refuses a run whose pods need more.
	PodSecurity *string                `json:"podSecurity"`
	Scheduler   Scheduler              `json:"scheduler"`
	Placement   Placement              `json:"placement"`
	Networking  Networking             `json:"networking"`
	Workspace   Workspace              `json:"workspace"`
	HFCache     Volume                 `json:"hf_cache"`
	Checkpoints Volume                 `json:"checkpoints"`
	Submit      Submit                 `json:"submit"`
	Launch      Launch                 `json:"launch"`
	Resources   Resources              `json:"resources"`
	Kuberay     Clusters               `json:"kuberay"`
	Deployments map[string]*Deployment `json:"deployments"`
	Labels      map[string]string      `json:"labels"`
	Annotations map[string]string      `json:"annotations"`
	// Ours: environment variables added to every container of the run's
	// Ray pods (heads and workers of every cluster).
	Env map[string]string `json:"env"`
	// Ours: DRA device settings nrl-k8s hard-codes.
	DRA DRA `json:"dra"`
	// Ours: the CPU-only dev pod (`nrl-k8s dev connect`).
	Dev Dev `json:"dev"`
}

// Scheduler is the run's scheduler: KAI (schedulerName and queue label on
// the pods), Kueue (the queue label on the object Kueue admits) or the
// cluster's default (fn/engine/manifest/profilekeys.go applies it).
type Scheduler struct {
	Kind  string  `json:"kind"`
	Queue *string `json:"queue"`
	// Ours: spec.priorityClassName of every Ray pod of the run.
	PriorityClassName *string `json:"priorityClassName"`
	// Ours: a topology constraint on the whole gang, written where KAI's
	// pod-grouper reads it (the RayJob's or RayCluster's annotations).
	Topology *SchedulerTopology `json:"topology"`
	// Ours, Kueue only: the WorkloadPriorityClass of the run's Workload
	// (the kueue.x-k8s.io/priority-class label beside the queue name).
	WorkloadPriorityClass *string `json:"workloadPriorityClass"`
	// Ours, Kueue only: multikueue has MultiKueue dispatch the admitted
	// object to a worker cluster (fn/scheduler/kueue's Dispatch).
	Dispatch *string `json:"dispatch"`
	// Ours, beside kind kai: Kueue admits the run against its quota while
	// KAI places its pods (docs/profiles.md, "KAI and Kueue together").
	Kueue *SchedulerKueue `json:"kueue"`
}

// NamesKAIScheduler reports whether a pod template of the profile (a Ray
// head or worker group of any cluster, or a deployment) names KAI's
// scheduler itself: under Kueue alone, KAI then still places those pods.
func (in *Infra) NamesKAIScheduler() bool {
	for _, rc := range in.Kuberay.ByRole() {
		if rc.Cluster.Spec == nil {
			continue
		}
		if rc.Cluster.Spec.HeadGroupSpec.Template.Spec.SchedulerName == vocab.KAISchedulerName {
			return true
		}
		for i := range rc.Cluster.Spec.WorkerGroupSpecs {
			if rc.Cluster.Spec.WorkerGroupSpecs[i].Template.Spec.SchedulerName == vocab.KAISchedulerName {
				return true
			}
		}
	}
	for _, d := range in.Deployments {
		if d != nil && d.Spec != nil && d.Spec.Template.Spec.SchedulerName == vocab.KAISchedulerName {
			return true
		}
	}
	return false
}

// SchedulerKueue is Kueue's admission beside KAI's placement: the LocalQueue
// and WorkloadPriorityClass of the object Kueue admits.
type SchedulerKueue struct {
	Queue                 string  `json:"queue"`
	WorkloadPriorityClass *string `json:"workloadPriorityClass"`
	Dispatch              *string `json:"dispatch"`
}

// KueueAdmission is Kueue's part of the scheduler, whichever way the profile
// says it (registry.Admission).
func (s Scheduler) KueueAdmission() (queue string, priority *string, ok bool) {
	return registry.Admission(s.View())
}

// SchedulerView is what the scheduler integrations (fn/scheduler) read of
// the profile.
func (in *Infra) SchedulerView() scheduler.Profile {
	p := in.Scheduler.View()
	p.Labels, p.Annotations, p.Suspend, p.NamesKAI = in.Labels, in.Annotations, in.Launch.RayJob.Suspend, in.NamesKAIScheduler()
	for _, rc := range in.Kuberay.ByRole() {
		part := scheduler.Part{Name: rc.Role, Labels: rc.Cluster.Labels, Annotations: rc.Cluster.Annotations}
		if spec := rc.Cluster.Spec; spec != nil {
			base := "kuberay." + rc.Role + ".spec"
			part.Templates = append(part.Templates, scheduler.Template{Field: base + ".headGroupSpec.template", Pod: &spec.HeadGroupSpec.Template})
			for i := range spec.WorkerGroupSpecs {
				part.Templates = append(part.Templates, scheduler.Template{Field: fmt.Sprintf("%s.workerGroupSpecs[%d].template", base, i), Pod: &spec.WorkerGroupSpecs[i].Template})
			}
		}
		p.Clusters = append(p.Clusters, part)
	}
	for _, k := range tree.SortedKeys(in.Deployments) {
		if d := in.Deployments[k]; d != nil {
			p.Deployments = append(p.Deployments, scheduler.Part{Name: k, Labels: d.Labels})
		}
	}
	return p
}

// View is the scheduler: keys alone, as the integrations read them (what
// the rest of the profile says left out).
func (s Scheduler) View() scheduler.Profile {
	p := scheduler.Profile{Kind: s.Kind, Queue: s.Queue, PriorityClassName: s.PriorityClassName, WorkloadPriorityClass: s.WorkloadPriorityClass, Dispatch: s.Dispatch}
	if t := s.Topology; t != nil {
		p.Topology = &scheduler.Topology{Topology: t.Topology, RequiredPlacement: t.RequiredPlacement, PreferredPlacement: t.PreferredPlacement}
	}
	if k := s.Kueue; k != nil {
		p.Kueue = &scheduler.KueueBeside{Queue: k.Queue, WorkloadPriorityClass: k.WorkloadPriorityClass, Dispatch: k.Dispatch}
	}
	return p
}

// SchedulerTopology is KAI's run-wide topology constraint.
type SchedulerTopology struct {
	Topology           string `json:"topology"`
	RequiredPlacement  string `json:"requiredPlacement"`
	PreferredPlacement string `json:"preferredPlacement"`
}

// Placement is inert in nrl-k8s; kept for schema compatibility.
type Placement struct {
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []Toleration      `json:"tolerations"`
	Affinity     map[string]any    `json:"affinity"`
}

// Toleration mirrors nrl-k8s's TolerationSpec.
type Toleration struct {
	Key               string  `json:"key"`
	Operator          string  `json:"operator"`
	Value             *string `json:"value"`
	Effect            string  `json:"effect"`
	TolerationSeconds *Int    `json:"tolerationSeconds"`
}

// Networking is inert in nrl-k8s.
type Networking struct {
	HostNetwork      bool              `json:"hostNetwork"`
	GlooSocketIfname *string           `json:"gloo_socket_ifname"`
	NCCLSocketIfname *string           `json:"nccl_socket_ifname"`
	NCCLIBDisable    bool              `json:"nccl_ib_disable"`
	NCCLNet          *string           `json:"nccl_net"`
	ExtraEnv         map[string]string `json:"extra_env"`
}

// Workspace is inert in nrl-k8s (mounts are written by hand in the specs).
type Workspace struct {
	Kind       string  `json:"kind"`
	PVCName    *string `json:"pvcName"`
	MountPath  string  `json:"mountPath"`
	RepoSubdir string  `json:"repoSubdir"`
	Size       *string `json:"size"`
	HostPath   *string `json:"hostPath"`
}

// Volume is hf_cache / checkpoints.
type Volume struct {
	Kind      string  `json:"kind"`
	PVCName   *string `json:"pvcName"`
	MountPath string  `json:"mountPath"`
	// Ours: the directory of the claim to mount (volumeMounts[].subPath),
	// so a shared PVC's root is not what the pods see.
	SubPath *string `json:"subPath"`
}

// Submit is runtime-only except for the submitter check.
type Submit struct {
	Kind               string `json:"kind"`
	PortForward        string `json:"portForward"`
	DevPod             string `json:"devPod"`
	LocalDashboardPort Int    `json:"localDashboardPort"`
	Submitter          string `json:"submitter"`
	ExecTmpDir         string `json:"execTmpDir"`
}

// Launch holds the training entrypoint and how it is submitted.
type Launch struct {
	Mode           string            `json:"mode"`
	RunMode        string            `json:"runMode"`
	Attach         Attach            `json:"attach"`
	PeerWatcher    bool              `json:"peerWatcher"`
	Entrypoint     *string           `json:"entrypoint"`
	Env            map[string]string `json:"env"`
	RayUploadPaths []string          `json:"rayUploadPaths"`
	CodeSource     string            `json:"codeSource"`
	CodePath       *string           `json:"codePath"`
	// Ours: where the recipe tree (NeMo-RL's checkout layout) sits in the
	// pod; default codePath. --config is pointed at the checked recipe there.
	RecipeRoot *string `json:"recipeRoot"`
	// Ours: checkout (the driver reads the recipe from the code tree, at
	// recipeRoot) or configMap (the merged recipe ships with the run).
	RecipeSource string `json:"recipeSource"`
	// Ours: knobs of the rendered RayJob.
	RayJob RayJobOptions `json:"rayjob"`
	// Ours: measured size of the upload working dir, for the 100 MiB check
	// (a render cannot read the user's checkout, so the caller states it).
	UploadBytes *Int `json:"uploadBytes"`
}

// Attach names clusters for mode=attach.
type Attach struct {
	Generation *string `json:"generation"`
	Gym        *string `json:"gym"`
	Training   *string `json:"training"`
}

// RayJobOptions are the RayJob fields nrl-k8s sets from CLI flags.
type RayJobOptions struct {
	Name                     *string `json:"name"`
	SubmissionMode           string  `json:"submissionMode"`
	ShutdownAfterJobFinishes bool    `json:"shutdownAfterJobFinishes"`
	TTLSecondsAfterFinished  Int     `json:"ttlSecondsAfterFinished"`
	ActiveDeadlineSeconds    *Int    `json:"activeDeadlineSeconds"`
	Suspend                  bool    `json:"suspend"`
}

// Resources is inert in nrl-k8s.
type Resources struct {
	Training   RoleResources `json:"training"`
	Generation RoleResources `json:"generation"`
	Gym        RoleResources `json:"gym"`
}

// RoleResources is head and worker sizing (inert).
type RoleResources struct {
	Head   NodeResources `json:"head"`
	Worker NodeResources `json:"worker"`
}

// NodeResources is one node's sizing (inert).
type NodeResources struct {
	CPU    *string `json:"cpu"`
	Memory *string `json:"memory"`
	GPU    *Int    `json:"gpu"`
}

// Clusters is kuberay.<role>; any other role is an unknown-key error.
type Clusters struct {
	Training   *Cluster `json:"training"`
	Generation *Cluster `json:"generation"`
	Gym        *Cluster `json:"gym"`
}

// ByRole returns the declared clusters in role order.
func (c Clusters) ByRole() []RoleCluster {
	var out []RoleCluster
	for _, r := range Roles {
		var cl *Cluster
		switch r {
		case "generation":
			cl = c.Generation
		case "gym":
			cl = c.Gym
		case "training":
			cl = c.Training
		}
		if cl != nil {
			out = append(out, RoleCluster{Role: r, Cluster: cl})
		}
	}
	return out
}

// RoleCluster pairs a cluster with its role.
type RoleCluster struct {
	Role    string
	Cluster *Cluster
}

// Cluster is one RayCluster.
type Cluster struct {
	Name        string                `json:"name"`
	Spec        *rayv1.RayClusterSpec `json:"spec"`
	Labels      map[string]string     `json:"labels"`
	Annotations map[string]string     `json:"annotations"`
	SegmentSize *Int                  `json:"segmentSize"`
	Daemon      *Daemon               `json:"daemon"`
	// Ours: per-cluster DRA settings over the profile's.
	DRA *DRA `json:"dra"`
}

// Daemon is a long-lived job submitted to a cluster before training.
type Daemon struct {
	Entrypoint          string            `json:"entrypoint"`
	SubmissionID        *string           `json:"submissionId"`
	Env                 map[string]string `json:"env"`
	HealthCheckURL      *string           `json:"healthCheckUrl"`
	HealthCheckTimeoutS Int               `json:"healthCheckTimeoutS"`
	RayUploadPaths      []string          `json:"rayUploadPaths"`
}

// Deployment is a Deployment (+ Service) rendered beside the clusters.
type Deployment struct {
	Name                string                 `json:"name"`
	Spec                *appsv1.DeploymentSpec `json:"spec"`
	Labels              map[string]string      `json:"labels"`
	Annotations         map[string]string      `json:"annotations"`
	HealthCheckURL      *string                `json:"healthCheckUrl"`
	HealthCheckTimeoutS Int                    `json:"healthCheckTimeoutS"`
}

// DRA are the device settings of the objects we create for DRA claims.
type DRA struct {
	RoCE *RoCE `json:"roce"`
	// InfiniBand is the request for infiniband-channel claims; it has no
	// default device class (no cluster's class is everyone's).
	InfiniBand    *RoCE          `json:"infiniband"`
	ComputeDomain *ComputeDomain `json:"computeDomain"`
}

// RoCE is a NIC ResourceClaimTemplate request (RoCE or InfiniBand).
type RoCE struct {
	Count           *Int    `json:"count"`
	DeviceClassName *string `json:"deviceClassName"`
}

// ComputeDomain settings; numNodes 0 lets the driver follow the pods.
type ComputeDomain struct {
	NumNodes *Int `json:"numNodes"`
}

// Dev is the dev pod; unset fields take the profile's image, pull secrets,
// service account and workspace claim.
type Dev struct {
	Image            string   `json:"image"`
	ImagePullSecrets []string `json:"imagePullSecrets"`
	ServiceAccount   *string  `json:"serviceAccount"`
	PVCName          string   `json:"pvcName"`
	// Ours: where the dev pod mounts its claim; default where the Ray
	// pods mount the same claim, else /mnt/rl-workspace (nrl-k8s's).
	MountPath  string `json:"mountPath"`
	SecretName string `json:"secretName"`
}

// Int accepts a JSON number or a numeric string (pydantic's lax int), and
// rejects fractions.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (i *Int) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.TrimSpace(str)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*i = Int(n)
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) {
		*i = Int(int64(f))
		return nil
	}
	return fmt.Errorf("expected an integer, found %s", string(b))
}

// Value returns the int, or def for nil.
func (i *Int) Value(def int64) int64 {
	if i == nil {
		return def
	}
	return int64(*i)
}
