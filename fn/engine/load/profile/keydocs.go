package profile

import (
	"maps"
	"sync"
)

// keyDoc is what docs/profiles.md and the JSON Schema say about one key.
type keyDoc struct {
	desc    string
	example string // YAML
}

// inert is said of the keys that change nothing in the output (check warns
// when they are set, naming where the setting goes: fn/engine/check/inert.go).
const inert = " Changes nothing in the output (a render warns)."

// keyDocs documents every key of Infra (MissingDocs keeps it complete).
// <role> is generation, gym or training; <name> is any key you choose.
// Built on first use: only the schema and docs commands read it, where a
// package-level map literal is built by every process's init.
var keyDocs = sync.OnceValue(func() map[string]keyDoc {
	docs := topKeyDocs()
	maps.Copy(docs, clusterKeyDocs())
	return docs
})

// topKeyDocs documents the keys about where and how pods run: namespace,
// image, scheduler, placement, networking, storage, submit.
func topKeyDocs() map[string]keyDoc {
	return map[string]keyDoc{
		"namespace":        {"Namespace of every rendered object. Required; --namespace / spec.namespace win; `default` when nothing sets it.", "rl"},
		"image":            {"Container image set on every container of every RayCluster pod (sidecars too, init containers left alone) and on Deployment containers that name none. Required.", "nvcr.io/nvidia/nemo-rl:v0.5.0"},
		"imagePullSecrets": {"When non-empty, replaces the pull secrets of every rendered pod (RayCluster, Deployment, dev pod).", "[ngc-pull]"},
		"rayVersion":       {"Changes nothing in the output (a render warns): write spec.rayVersion in kuberay.<role>.spec.", "2.52.0"},
		"serviceAccount":   {"When set, becomes serviceAccountName of every RayCluster and Deployment pod.", "nemo-rl"},
		"podSecurity":      {"The Pod Security level the target namespace enforces (its pod-security.kubernetes.io/enforce label): privileged, baseline or restricted. check judges every pod the run makes, as KubeRay creates them, with the API server's own Pod Security code; a pod needing more is an error naming the field. Unset: no constraint, check reports the level the run needs and warns about what baseline refuses.", "baseline"},

		"scheduler":                             {"The scheduler. kind kai puts schedulerName: kai-scheduler on every Ray and Deployment pod that names none and the kai.scheduler/queue label on every object and pod template; kind kueue puts the kueue.x-k8s.io/queue-name label on the object Kueue admits (the RayJob, or each RayCluster in raycluster mode) and nowhere else, leaving schedulerName and spec.suspend to Kueue; default changes nothing.", "{kind: kai, queue: team-a}"},
		"scheduler.kind":                        {"kai, kueue or default (case-sensitive); see scheduler. A pod naming another scheduler is an error under kai.", "kai"},
		"scheduler.priorityClassName":           {"spec.priorityClassName of every Ray pod of the run (heads and workers of every cluster; not deployments, which are shared, nor the dev pod): a DNS-1123 subdomain naming a PriorityClass. A pod that names another one is an error.", "research-high"},
		"scheduler.topology":                    {"Under kind kai: a topology constraint for the whole gang, head included, written as the kai.scheduler/topology and topology-required-placement / -preferred-placement annotations of the RayJob (RayCluster in raycluster mode), which KAI reads as the PodGroup's constraint; a pod template's own annotations constrain that worker group alone. A required level binds the head too: use preferredPlacement when the head runs outside that level (a CPU pool).", "{topology: gb300-topology, preferredPlacement: nvidia.com/gpu.clique}"},
		"scheduler.topology.topology":           {"The KAI Topology object's name.", "gb300-topology"},
		"scheduler.topology.requiredPlacement":  {"The level every pod of the gang must share (a node label key of the topology).", "nvidia.com/gpu.clique"},
		"scheduler.topology.preferredPlacement": {"The level the gang should share when it can.", "nvidia.com/gpu.clique"},
		"scheduler.queue":                       {"KAI queue or Kueue LocalQueue; required when kind is kai or kueue. Under kai: the kai.scheduler/queue label (another value already in the specs is an error). Under kueue: the kueue.x-k8s.io/queue-name label of the admitted object, naming a LocalQueue in the run's namespace (the label written by hand is an error).", "team-a"},
		"scheduler.kueue":                       {"Under kind kai: Kueue admits the run against its quota while KAI places its pods. Puts the kueue.x-k8s.io/queue-name (and priority-class) label on the object Kueue admits, as kind kueue does, under the same rules (no spec.suspend, no hand-written queue label). Refused beside kind kueue or default: Kueue alone is kind kueue.", "{queue: lab-queue, workloadPriorityClass: lab-high}"},
		"scheduler.kueue.queue":                 {"The Kueue LocalQueue in the run's namespace that admits the run (a DNS-1123 subdomain): the kueue.x-k8s.io/queue-name label. scheduler.queue stays KAI's queue.", "lab-queue"},
		"scheduler.kueue.workloadPriorityClass": {"The kueue.x-k8s.io/priority-class label beside the queue name: a Kueue WorkloadPriorityClass (the Workload's priority for queueing and preemption; the pods' own PriorityClass stays scheduler.priorityClassName).", "lab-high"},
		"scheduler.dispatch":                    {"Under kind kueue: multikueue puts spec.managedBy: kueue.x-k8s.io/multikueue on the object Kueue admits, for a MultiKueue manager (docs/multicluster.md); rayjob mode.", "multikueue"},
		"scheduler.kueue.dispatch":              {"scheduler.dispatch beside KAI.", "multikueue"},
		"scheduler.workloadPriorityClass":       {"Under kind kueue (under kind kai: scheduler.kueue.workloadPriorityClass): the kueue.x-k8s.io/priority-class label, naming a Kueue WorkloadPriorityClass (the Workload's priority for queueing and preemption, not the pods' PriorityClass).", "lab-high"},

		"placement":                                 {"Where GPU workers run: nodeSelector and tolerations are added to every worker group whose pods request nvidia.com/gpu, in every cluster (heads and CPU groups are left alone).", "{nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}"},
		"placement.nodeSelector":                    {"Node labels added to every GPU worker's nodeSelector; a key the spec sets to another value is an error.", "{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"},
		"placement.tolerations":                     {"Tolerations added to every GPU worker (identical ones are not repeated); operator defaults to Equal, effect to NoSchedule.", "[{key: nvidia.com/gpu, operator: Exists}]"},
		"placement.tolerations[].key":               {"Taint key; required.", "nvidia.com/gpu"},
		"placement.tolerations[].operator":          {"Equal (default) or Exists.", "Exists"},
		"placement.tolerations[].value":             {"Taint value for operator Equal.", "present"},
		"placement.tolerations[].effect":            {"NoSchedule (default), PreferNoSchedule or NoExecute.", "NoSchedule"},
		"placement.tolerations[].tolerationSeconds": {"How long a NoExecute taint is tolerated.", "300"},
		"placement.affinity":                        {"A Kubernetes affinity, free form." + inert + " Write it in the worker templates.", "{}"},

		"networking":                    {"NCCL / Gloo network hints." + inert + " Set NCCL_* variables in the container env instead.", "{nccl_ib_disable: true}"},
		"networking.hostNetwork":        {"Host networking." + inert, "false"},
		"networking.gloo_socket_ifname": {"GLOO_SOCKET_IFNAME." + inert, "eth0"},
		"networking.nccl_socket_ifname": {"NCCL_SOCKET_IFNAME." + inert, "eth0"},
		"networking.nccl_ib_disable":    {"NCCL_IB_DISABLE." + inert, "true"},
		"networking.nccl_net":           {"NCCL_NET: Socket, IB or OFI." + inert, "Socket"},
		"networking.extra_env":          {"More environment variables." + inert + " Values that look like secrets are an error.", "{NCCL_DEBUG: INFO}"},

		"workspace":            {"Where runs keep their working directories." + inert + " Mount the volume in the pod templates; only workspace.pvcName is used, as the dev pod's claim.", "{kind: pvc, pvcName: nemo-rl-workspace}"},
		"workspace.kind":       {"lustre, pvc, hostPath, rayUpload or auto." + inert, "pvc"},
		"workspace.pvcName":    {"PersistentVolumeClaim; required for kind lustre or pvc. The dev pod mounts it unless dev.pvcName is set.", "nemo-rl-workspace"},
		"workspace.mountPath":  {"Mount path in the pods." + inert, "/mnt/nemo-rl"},
		"workspace.repoSubdir": {"Subdirectory for per-run checkouts." + inert, "workdirs"},
		"workspace.size":       {"Requested size." + inert, "1Ti"},
		"workspace.hostPath":   {"Node directory; required for kind hostPath." + inert, "/data/nemo-rl"},

		"hf_cache":           {"Hugging Face cache: kind pvc or lustre (a PVC) or emptyDir becomes a volume hf-cache mounted at mountPath into every container of every cluster's head and workers; none adds nothing. A volume name or mount path already taken is an error.", "{kind: pvc, pvcName: hf-cache}"},
		"hf_cache.kind":      {"lustre, pvc, emptyDir or none; see hf_cache.", "pvc"},
		"hf_cache.pvcName":   {"PersistentVolumeClaim; required for kind lustre or pvc.", "hf-cache"},
		"hf_cache.mountPath": {"Mount path of the hf-cache volume (set HF_HOME to it in the container env).", "/root/.cache/huggingface"},
		"hf_cache.subPath":   {"Directory of the claim to mount (volumeMounts[].subPath; relative, no ..); null mounts the claim's root. Kind pvc or lustre only.", "${user:}/hf-cache"},

		"checkpoints":           {"Checkpoint volume: kind pvc or lustre becomes a volume checkpoints mounted at mountPath into every container of the training cluster's head and workers; none adds nothing.", "{kind: pvc, pvcName: nemo-rl-checkpoints}"},
		"checkpoints.kind":      {"lustre, pvc or none; see checkpoints.", "pvc"},
		"checkpoints.pvcName":   {"PersistentVolumeClaim; required for kind lustre or pvc.", "nemo-rl-checkpoints"},
		"checkpoints.mountPath": {"Mount path of the checkpoints volume (point the recipe's checkpointing.checkpoint_dir below it).", "/mnt/nemo-rl/checkpoints"},
		"checkpoints.subPath":   {"Directory of the claim to mount (volumeMounts[].subPath; relative, no ..); null mounts the claim's root. Kind pvc or lustre only.", "${user:}/checkpoints"},

		"submit":                    {"How nrl-k8s submits at run time; a render only checks the values.", "{submitter: exec}"},
		"submit.kind":               {"sdk or rayjob (nrl-k8s runtime).", "rayjob"},
		"submit.portForward":        {"kubectl-ray-plugin, kubectl-port-forward or auto (nrl-k8s runtime).", "auto"},
		"submit.devPod":             {"auto, required or skip (nrl-k8s runtime).", "skip"},
		"submit.localDashboardPort": {"Local port of the dashboard port-forward (nrl-k8s runtime).", "18265"},
		"submit.submitter":          {"portForward or exec; checked against the head pod (exec needs a shell in the head container).", "exec"},
		"submit.execTmpDir":         {"Temporary directory for the exec submitter (nrl-k8s runtime).", "/tmp"},
	}
}

// clusterKeyDocs documents the keys about what runs: launch, resources,
// the clusters, deployments, labels, env, annotations, DRA and the dev pod.
func clusterKeyDocs() map[string]keyDoc {
	return map[string]keyDoc{
		"launch":                                 {"The training driver and how it is submitted.", "{runMode: batch, codeSource: image, codePath: /opt/nemo-rl}"},
		"launch.mode":                            {"single, rayjob, attach or bringup (nrl-k8s runtime); attach needs launch.attach.", "single"},
		"launch.runMode":                         {"interactive or batch (nrl-k8s runtime).", "batch"},
		"launch.attach":                          {"Existing RayCluster names per role for mode attach.", "{training: alice-train}"},
		"launch.attach.generation":               {"Generation cluster to attach to.", "alice-gen"},
		"launch.attach.gym":                      {"Gym cluster to attach to.", "alice-gym"},
		"launch.attach.training":                 {"Training cluster to attach to.", "alice-train"},
		"launch.peerWatcher":                     {"Runtime peer watcher (nrl-k8s runtime).", "true"},
		"launch.entrypoint":                      {"Shell script of the training driver: the RayJob's spec.entrypoint. Every driver call's --config is pointed at the checked recipe (below launch.recipeRoot); run overrides are appended to the first driver call. Required to render a job. OmegaConf resolves it: write a shell ${VAR} as \\${VAR}.", "|\n  cd /opt/nemo-rl\n  python -u examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml\n"},
		"launch.env":                             {"Variables exported before the entrypoint of the training job in raycluster mode. Values that look like secrets are an error: use a Secret.", "{NCCL_DEBUG: WARN}"},
		"launch.rayUploadPaths":                  {"Paths uploaded with codeSource upload (default: nrl-k8s's list); their size is checked against Ray's 100 MiB limit.", "[nemo_rl, examples]"},
		"launch.codeSource":                      {"upload (Ray working_dir), image (code baked into the image) or lustre (code on a shared volume). image and lustre need codePath.", "image"},
		"launch.codePath":                        {"Where the code is in the pod for codeSource image or lustre.", "/opt/nemo-rl"},
		"launch.recipeRoot":                      {"Where NeMo-RL's checkout (examples/configs/...) sits in the pod; default codePath. Every driver call's --config is pointed at the checked recipe below it.", "/opt/nemo-rl"},
		"launch.recipeSource":                    {"checkout: the driver reads the recipe from the code tree at recipeRoot; configMap: the merged recipe ships with the run in an immutable ConfigMap <rayjob>-recipe-<hash of its text> mounted in the head (rayjob mode only): a changed recipe is a changed RayJob.", "configMap"},
		"launch.rayjob":                          {"Fields of the rendered RayJob (nrl-k8s takes them from CLI flags).", "{ttlSecondsAfterFinished: 600}"},
		"launch.rayjob.name":                     {"RayJob name; default the training cluster's name (--name wins).", "alice-grpo"},
		"launch.rayjob.submissionMode":           {"RayJob spec.submissionMode. HTTPMode keeps the gang schedulable (K8sJobMode adds a submitter Job).", "HTTPMode"},
		"launch.rayjob.suspend":                  {"RayJob spec.suspend: KubeRay creates nothing until it is set to false (needs shutdownAfterJobFinishes: true).", "true"},
		"launch.rayjob.shutdownAfterJobFinishes": {"RayJob spec.shutdownAfterJobFinishes.", "true"},
		"launch.rayjob.ttlSecondsAfterFinished":  {"RayJob spec.ttlSecondsAfterFinished (0 or more).", "600"},
		"launch.rayjob.activeDeadlineSeconds":    {"RayJob spec.activeDeadlineSeconds, when set.", "86400"},
		"launch.uploadBytes":                     {"Measured size of the upload for the 100 MiB check (a render cannot read your checkout; nrl-k8s check --repo-root measures it instead).", "52428800"},

		"resources":                      {"Node sizes per role." + inert + " Put resources into the container specs.", "{training: {worker: {gpu: 8}}}"},
		"resources.<role>":               {"Sizes of one role (generation, gym, training)." + inert, "{worker: {gpu: 8}}"},
		"resources.<role>.head":          {"Head node size." + inert, "{cpu: \"8\", memory: 32Gi}"},
		"resources.<role>.head.cpu":      {"CPU." + inert, "\"8\""},
		"resources.<role>.head.memory":   {"Memory." + inert, "32Gi"},
		"resources.<role>.head.gpu":      {"GPUs." + inert, "0"},
		"resources.<role>.worker":        {"Worker node size." + inert, "{gpu: 8}"},
		"resources.<role>.worker.cpu":    {"CPU." + inert, "\"96\""},
		"resources.<role>.worker.memory": {"Memory." + inert, "1Ti"},
		"resources.<role>.worker.gpu":    {"GPUs." + inert, "8"},

		"kuberay":                                   {"The RayClusters, one per role: generation, gym, training (rendered in that order). training is required to render a job.", "{training: {name: alice-train, spec: {}}}"},
		"kuberay.<role>":                            {"One RayCluster.", "{name: \"${user:}-train\", spec: {}}"},
		"kuberay.<role>.name":                       {"RayCluster name (and the RayJob's by default). Required.", "${user:}-train"},
		"kuberay.<role>.spec":                       {"The RayCluster .spec (KubeRay v1.5.0 RayClusterSpec; its CRD schema is fn/analyse/schema/crds/ray.io_rayclusters.yaml). Decoded strictly: unknown keys are errors. The renderer sets image, pull secrets, service account, labels and DRA claim names in it and splits segments. The scheduler, node selectors, tolerations, volumes and GPU resources you write here are what the cluster gets.", "{rayVersion: \"2.52.0\", headGroupSpec: {}, workerGroupSpecs: []}"},
		"kuberay.<role>.labels":                     {"Labels of this cluster's objects and pods, over the profile's labels.", "{team: rl}"},
		"kuberay.<role>.annotations":                {"Annotations of this cluster's objects (and of its RayJob), over the profile's.", "{owner: alice}"},
		"kuberay.<role>.segmentSize":                {"Splits each worker group with more replicas into groups of this many (<group>-segment-<i>); replicas must divide evenly. Use it to keep a gang inside one NVLink domain.", "16"},
		"kuberay.<role>.daemon":                     {"A long-lived job submitted to this cluster before training (raycluster mode renders it as a RayJob on the cluster).", "{entrypoint: python -m my.server}"},
		"kuberay.<role>.daemon.entrypoint":          {"The daemon's shell command. Required when daemon is set.", "python -m my.server"},
		"kuberay.<role>.daemon.submissionId":        {"The RayJob's spec.jobId, when set.", "gen-server"},
		"kuberay.<role>.daemon.env":                 {"runtime_env env_vars of the daemon job.", "{PORT: \"8000\"}"},
		"kuberay.<role>.daemon.healthCheckUrl":      {"URL nrl-k8s polls before training (runtime).", "http://localhost:8000/health"},
		"kuberay.<role>.daemon.healthCheckTimeoutS": {"Seconds to wait for the health check (runtime).", "600"},
		"kuberay.<role>.daemon.rayUploadPaths":      {"Paths uploaded with the daemon (runtime).", "[examples]"},
		"kuberay.<role>.dra":                        {"DRA device settings for this cluster, over the profile's dra.", "{roce: {count: 4}}"},

		"deployments":                            {"Deployments (and a ClusterIP Service each, when they have ports and a selector) rendered beside the clusters.", "{reward: {name: reward, spec: {}}}"},
		"deployments.<name>":                     {"One Deployment.", "{name: reward, spec: {}}"},
		"deployments.<name>.name":                {"Deployment (and Service) name. Required.", "reward-model"},
		"deployments.<name>.spec":                {"The Deployment .spec (apps/v1 DeploymentSpec), decoded strictly. Containers without an image get the profile's image.", "{replicas: 1, selector: {matchLabels: {app: reward}}, template: {}}"},
		"deployments.<name>.labels":              {"Labels of the Deployment and its pods, over the profile's.", "{app: reward}"},
		"deployments.<name>.annotations":         {"Annotations of the Deployment, over the profile's.", "{owner: alice}"},
		"deployments.<name>.healthCheckUrl":      {"URL nrl-k8s polls before training (runtime).", "http://reward:8000/health"},
		"deployments.<name>.healthCheckTimeoutS": {"Seconds to wait for the health check (runtime).", "600"},

		"labels":      {"Labels of every object and pod, under each cluster's / deployment's own.", "{nrl-k8s/owner: \"${user:}\"}"},
		"env":         {"Environment variables added to every container of the run's Ray pods (heads and workers of every cluster; not deployments nor the dev pod), after the containers' own, in name order. Names are shell variable names; a name a container already sets is an error; values that look like secrets are an error (use valueFrom.secretKeyRef in the spec). Unlike launch.env (exported before the training entrypoint in raycluster mode), every Ray process sees them.", "{NCCL_DEBUG: INFO}"},
		"annotations": {"Annotations of every RayCluster, RayJob and Deployment (not pods).", "{team: rl}"},

		"dra":                            {"Settings of the DRA objects rendered for the claims the worker pods name: compute-domain-channel → a ComputeDomain, roce-channel → a RoCE ResourceClaimTemplate (roce-<cluster>-<role>), infiniband-channel → an InfiniBand ResourceClaimTemplate (infiniband-<cluster>-<role>). A profile whose pods claim none renders no DRA object.", "{roce: {count: 8}}"},
		"dra.roce":                       {"The RoCE ResourceClaimTemplate's device request.", "{count: 8, deviceClassName: roce.networking.k8s.aws}"},
		"dra.roce.count":                 {"RoCE devices per worker pod (1 or more).", "4"},
		"dra.roce.deviceClassName":       {"DeviceClass of the RoCE request.", "roce.networking.k8s.aws"},
		"dra.infiniband":                 {"The InfiniBand ResourceClaimTemplate's device request, for worker pods claiming infiniband-channel (template infiniband-<cluster>-<role>). Count and device class have no default: a claim without them is an error.", "{count: 8, deviceClassName: ib.networking.example.com}"},
		"dra.infiniband.count":           {"InfiniBand devices per worker pod (1 or more); required by an infiniband-channel claim.", "8"},
		"dra.infiniband.deviceClassName": {"DeviceClass of the InfiniBand request (the cluster's DRA driver names it); required by an infiniband-channel claim.", "ib.networking.example.com"},
		"dra.computeDomain":              {"The ComputeDomain (NVIDIA IMEX / multi-node NVLink).", "{numNodes: 0}"},
		"dra.computeDomain.numNodes":     {"ComputeDomain spec.numNodes; 0 lets the driver follow the pods.", "0"},

		"dev":                  {"The CPU-only dev pod (--mode dev); unset keys take the profile's image, imagePullSecrets, serviceAccount and workspace.pvcName.", "{pvcName: rl-workspace}"},
		"dev.image":            {"Dev pod image; default the profile's image.", "nvcr.io/nvidia/nemo-rl:v0.5.0"},
		"dev.mountPath":        {"Where the dev pod mounts its claim (its home is <mountPath>/<user>); default where the profile's Ray pods mount the same claim, so paths a run prints mean the same in the dev pod, else /mnt/rl-workspace (nrl-k8s's). An absolute, clean path.", "/mnt/nfs"},
		"dev.pvcName":          {"Claim the dev pod mounts; default workspace.pvcName (kind pvc or lustre), else the one PersistentVolumeClaim the Ray pods mount; with none, the dev pod gets an emptyDir and a warning (no claim of another cluster is assumed).", "rl-workspace"},
		"dev.imagePullSecrets": {"Dev pod pull secrets; default the profile's imagePullSecrets.", "[ngc-pull]"},
		"dev.serviceAccount":   {"Dev pod service account; default the profile's serviceAccount.", "nemo-rl"},
		"dev.secretName":       {"Secret the dev pod reads its environment from (optional).", "${user:}-secrets"},
	}
}
