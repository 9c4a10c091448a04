// Package vocab is the vocabulary a run's objects and the cluster share:
// labels, annotations, API groups and versions, and well-known names (ours,
// KubeRay's, KAI's, Kueue's, DRA's), each spelled once, in the spirit of
// KubeRay's ray-operator/controllers/ray/utils/constant.go. It holds names
// only: the rules that read them stay with their packages (fn/analyse/kai
// groups KAI's gangs, fn/engine/manifest decides which label wins).
package vocab

// Ours: the run's identity and the nemo-rl.nvidia.com API.
const (
	// Group is the API group of NemoRLRun, the kustomize generator and
	// ReviewAllow, and the prefix of our own labels and annotations.
	Group = "nemo-rl.nvidia.com"
	// APIVersion is the apiVersion of every kind in Group.
	APIVersion = Group + "/v1alpha1"

	// InstanceLabel is the run's identity (docs/run-identity.md): it names
	// the run (or, for shared objects, what they belong to), KubeRay copies
	// it from a RayJob onto its RayCluster and Pods, and
	// `kubectl delete -l app.kubernetes.io/instance=RUN` removes a run.
	InstanceLabel = "app.kubernetes.io/instance"
	// ManagedByLabel is on every object, with ManagedByValue, so clusters
	// that select on it keep working. Helm rewrites it: it never finds a run.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "nrl-k8s"
	// PartOfLabel is on every object, with PartOfValue.
	PartOfLabel = "app.kubernetes.io/part-of"
	PartOfValue = "nemo-rl"
	// OwnerLabel is the submitting user (nrl-k8s's dev pod label).
	OwnerLabel = "nrl-k8s/owner"
	// RunIDLabel carries --run-id.
	RunIDLabel = "nemo-rl.nvidia.com/run-id"
	// JobLabel says what a RayJob runs: "training" or "daemon".
	JobLabel = "nemo-rl.nvidia.com/job"
	// StateAnnotation is on every object of a stopped run: what Git
	// declared, read by the Argo CD health checks (gitops/argocd), nrl-k8s
	// status and the PR review. No input may write it.
	StateAnnotation = "nemo-rl.nvidia.com/state"

	// FilesDirAnnotation is on a KRM input ConfigMap: every data key is a
	// file in this slash directory, relative to the package root ("." for
	// the root itself).
	FilesDirAnnotation = "nemo-rl.nvidia.com/files-dir"
	// FileAnnotation is on a KRM input ConfigMap holding exactly one file,
	// at this path.
	FileAnnotation = "nemo-rl.nvidia.com/file"
	// RunFilesAnnotation marks the KRM input ConfigMap that says where each
	// run's file is (data: run name -> slash path relative to the package
	// root): kustomize passes a transformer's items without their paths.
	RunFilesAnnotation = "nemo-rl.nvidia.com/run-files"
	// LocalConfigAnnotation (kustomize's and kpt's) marks items that are
	// configuration for tools, not objects to apply.
	LocalConfigAnnotation = "config.kubernetes.io/local-config"
)

// KubeRay's (ray-operator/controllers/ray/utils/constant.go, v1.5.0).
const (
	RayGroup      = "ray.io"
	RayVersion    = "v1"
	RayAPIVersion = RayGroup + "/" + RayVersion

	// Labels KubeRay puts on the pods it creates; the last three cannot be
	// overridden by the template's.
	RayIsRayNodeLabel  = "ray.io/is-ray-node"
	RayIdentifierLabel = "ray.io/identifier"
	RayClusterLabel    = "ray.io/cluster"
	RayNodeTypeLabel   = "ray.io/node-type"
	RayGroupLabel      = "ray.io/group"
	// RayHeadGroup is the head's RayGroupLabel (RayNodeHeadGroupLabelValue),
	// and the name of the head's subgroup in KAI's PodGroup of a Ray cluster.
	RayHeadGroup = "headgroup"
	// Kubernetes' recommended labels, as KubeRay fills them on its pods.
	NameLabel      = "app.kubernetes.io/name"
	CreatedByLabel = "app.kubernetes.io/created-by"
	// On a RayCluster a RayJob created: the kind and name of its creator.
	RayOriginatedFromCRDLabel    = "ray.io/originated-from-crd"
	RayOriginatedFromCRNameLabel = "ray.io/originated-from-cr-name"
	// Annotations KubeRay's GCS fault tolerance reads.
	RayFTEnabledAnnotation                = "ray.io/ft-enabled"
	RayExternalStorageNamespaceAnnotation = "ray.io/external-storage-namespace"
)

// KAI Scheduler's (kai-scheduler/KAI-Scheduler, read at d5bc503a).
const (
	// KAIGroup serves the Queue (KAIQueueVersion) and PodGroup
	// (KAIPodGroupVersion) kinds.
	KAIGroup           = "scheduling.run.ai"
	KAIQueueVersion    = "v2"
	KAIQueueAPIVersion = KAIGroup + "/" + KAIQueueVersion
	KAIPodGroupVersion = "v2alpha2"
	// Annotation keys of a topology constraint
	// (pkg/podgrouper/podgrouper/plugins/constants).
	KAITopologyAnnotation           = "kai.scheduler/topology"
	KAIRequiredPlacementAnnotation  = "kai.scheduler/topology-required-placement"
	KAIPreferredPlacementAnnotation = "kai.scheduler/topology-preferred-placement"
	// KAIQueueLabel names a workload's queue: the top owner's label, else
	// the pod's (the default grouper's CalcPodGroupQueue).
	KAIQueueLabel = "kai.scheduler/queue"
	// KAISchedulerName is KAI's schedulerName.
	KAISchedulerName = "kai-scheduler"
)

// Kueue's (sigs.k8s.io/kueue v0.17.0, pkg/controller/constants/constants.go).
const (
	KueueGroup = "kueue.x-k8s.io"
	// KueueVersion is the version Kueue serves and stores its queues and
	// Workloads in (apis/kueue/v1beta2).
	KueueVersion    = "v1beta2"
	KueueAPIVersion = KueueGroup + "/" + KueueVersion
	// KueueQueueLabel names the LocalQueue of the object Kueue admits.
	KueueQueueLabel = "kueue.x-k8s.io/queue-name"
	// KueuePriorityClassLabel names the WorkloadPriorityClass of its Workload.
	KueuePriorityClassLabel = "kueue.x-k8s.io/priority-class"
	// KueueJobUIDLabel is on a Workload: the UID of the job it stands for.
	KueueJobUIDLabel = "kueue.x-k8s.io/job-uid"
	// MultiKueueControllerName is MultiKueue's AdmissionCheck controller
	// and, in a RayJob's or RayCluster's spec.managedBy, what KubeRay
	// leaves the object to (pkg/controller/admissionchecks/multikueue).
	MultiKueueControllerName = "kueue.x-k8s.io/multikueue"
)

// Dynamic Resource Allocation's, and NVIDIA's ComputeDomain.
const (
	// DRAGroup serves DeviceClasses, ResourceClaims, their templates and
	// ResourceSlices (DRAVersion: Kubernetes 1.34 on).
	DRAGroup      = "resource.k8s.io"
	DRAVersion    = "v1"
	DRAAPIVersion = DRAGroup + "/" + DRAVersion
	// ComputeDomainGroup serves NVIDIA's ComputeDomain.
	ComputeDomainGroup      = "resource.nvidia.com"
	ComputeDomainVersion    = "v1beta1"
	ComputeDomainAPIVersion = ComputeDomainGroup + "/" + ComputeDomainVersion
	// ComputeDomainClaim, RoCEClaim and InfiniBandClaim are the
	// resourceClaims names a worker pod uses to ask for the DRA objects the
	// build creates.
	ComputeDomainClaim = "compute-domain-channel"
	RoCEClaim          = "roce-channel"
	InfiniBandClaim    = "infiniband-channel"
)
