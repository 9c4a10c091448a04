// Package check finds what nrl-k8s does not: a recipe that asks for GPUs or
// nodes the cluster spec does not provide, inlined secrets, fields cluster
// webhooks own, crashing Megatron settings, and output the operators would
// reject. Each rule names file, field path, what it found and what it expected.
package check

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// UploadSizer measures the working dir that codeSource=upload would send.
type UploadSizer func(paths []string) (int64, error)

// RayUploadLimit is Ray's cap on an uploaded working_dir.
const RayUploadLimit = 100 << 20

// Input is what the checks read.
type Input struct {
	Profile    *profile.Loaded
	Recipe     *effective.Recipe
	Params     runparams.Params
	UploadSize UploadSizer
}

// Run applies every pre-apply check.
func Inputs(in Input) diag.List {
	var ds diag.List
	f := in.Profile.File
	infra := in.Profile.Infra
	secretEnv(&ds, f, infra)
	hostEnv(&ds, f, in.Profile, in.Params.Mode)
	if in.Params.Mode == runparams.Dev {
		// The dev pod uses none of the clusters: their checks would only be noise.
		return ds
	}
	inert(&ds, f, infra)
	ds = append(ds, registry.CheckProfile(f, infra.SchedulerView())...)
	if in.Recipe != nil {
		driverVsRecipe(&ds, f, in.Recipe)
		if recipeCounts(&ds, infra, in.Recipe) {
			recipeVsCluster(&ds, f, infra, in.Recipe)
		}
		megatron(&ds, f, in.Recipe)
	}
	for _, rc := range infra.Kuberay.ByRole() {
		bounds(&ds, f, rc)
		segments(&ds, f, rc)
		webhookFields(&ds, f, rc)
		draSettings(&ds, f, infra, rc)
	}
	upload(&ds, f, infra, in.Params, in.UploadSize)
	if in.Recipe != nil {
		driverExit(&ds, f, in.Recipe.Entrypoint)
	}
	return ds
}

// driverExit: a driver piped into `tee` without pipefail exits with tee's
// status, so a crashed run reports SUCCEEDED. We warn rather than add
// `set -o pipefail`: Ray runs the entrypoint with /bin/sh, where pipefail is
// not POSIX before 2024 (dash before 0.5.12 rejects it and the script
// exits), so only the profile's author knows which shell runs it.
func driverExit(ds *diag.List, f string, ep *entrypoint.Script) {
	if ep == nil {
		return
	}
	for _, inv := range ep.Calls {
		if inv.Piped && !inv.PipefailOn {
			ds.Warnf(f, "launch.entrypoint", "line %d: the driver call %s is piped without `set -o pipefail`: a crashed driver exits with the pipe's last command (tee's 0) and the job reports success; expected `set -o pipefail` before it (bash; dash 0.5.12+), or the output redirected instead of piped", inv.Line, inv.Script)
		}
	}
}

// ClusterCount is a profile cluster counted as KubeRay counts it
// (capacity.Count, the one rule); a nil cluster or spec counts nothing.
func ClusterCount(c *profile.Cluster) capacity.Cluster {
	if c == nil {
		return capacity.Cluster{}
	}
	return capacity.Count(c.Spec)
}

// AsInt reads a recipe value as an integer (YAML int, whole float or
// numeric string).
func AsInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case float64:
		if t == float64(int64(t)) {
			return int64(t), true
		}
	case string:
		var n int64
		if _, err := fmt.Sscan(strings.TrimSpace(t), &n); err == nil {
			return n, true
		}
	}
	return 0, false
}

// recipeVsCluster compares what the recipe asks for with what the training
// cluster provides; a mismatch would otherwise show up as Pending pods or a
// Ray job waiting forever for nodes.
func recipeVsCluster(ds *diag.List, f string, infra *profile.Infra, r *effective.Recipe) {
	c := infra.Kuberay.Training
	if c == nil || c.Spec == nil {
		return
	}
	gpuV, hasGPU, gpuDyn := r.Value("cluster.gpus_per_node")
	gpus, gpuOK := AsInt(gpuV)
	count := capacity.Count(c.Spec)
	groups := count.GPUGroups()
	if len(groups) == 0 && hasGPU && gpuOK && !gpuDyn && gpus > 0 {
		// No GPU worker at all is the mismatch Ray never recovers from: the
		// driver waits for GPUs that no pod requests.
		ds.Errorf(f, "kuberay.training.spec.workerGroupSpecs[*].template.spec.containers[*].resources.limits[nvidia.com/gpu]",
			"found no training worker group requesting nvidia.com/gpu; expected %d GPUs per worker, the recipe's cluster.gpus_per_node (set by %s)",
			gpus, r.Origin("cluster.gpus_per_node"))
	}
	for _, g := range groups {
		if hasGPU && gpuOK && !gpuDyn && g.GPUsPerPod != gpus {
			ds.Errorf(f, fmt.Sprintf("kuberay.training.spec.workerGroupSpecs[%d].template.spec.containers[*].resources.limits[nvidia.com/gpu]", g.Index),
				"found %d GPUs per worker in group %q (every container's nvidia.com/gpu); expected %d, the recipe's cluster.gpus_per_node (set by %s)",
				g.GPUsPerPod, g.Name, gpus, r.Origin("cluster.gpus_per_node"))
		}
	}
	nodesV, hasNodes, nodesDyn := r.Value("cluster.num_nodes")
	nodes, nodesOK := AsInt(nodesV)
	provided := count.GPUNodes
	if !hasNodes || !nodesOK || nodesDyn || len(groups) == 0 || count.OverBound() {
		return
	}
	field := "kuberay.training.spec.workerGroupSpecs[*].replicas"
	switch {
	case nodes > provided && count.Autoscaling && nodes <= count.MaxGPUNodes:
		// The Ray autoscaler adds workers for the placement groups the
		// driver asks for, up to maxReplicas: the run starts once it has.
		ds.Warnf(f, field, "KubeRay starts %d GPU nodes (replicas clamped to [minReplicas, maxReplicas] × numOfHosts) and the recipe's cluster.num_nodes is %d (set by %s): the run waits for the in-tree autoscaler to add %d (up to %s)",
			provided, nodes, r.Origin("cluster.num_nodes"), nodes-provided, ceiling(count.MaxGPUNodes))
	case nodes > provided:
		ds.Errorf(f, field, "the training cluster provides %d GPU nodes (replicas clamped to [minReplicas, maxReplicas] × numOfHosts, as KubeRay starts them%s); expected at least %d, the recipe's cluster.num_nodes (set by %s): Ray would wait forever for the missing nodes",
			provided, autoscalingNote(count), nodes, r.Origin("cluster.num_nodes"))
	case nodes < provided:
		ds.Warnf(f, field, "the training cluster provides %d GPU nodes but the recipe's cluster.num_nodes is %d (set by %s): %d nodes will sit idle",
			provided, nodes, r.Origin("cluster.num_nodes"), provided-nodes)
	}
	if col, ok, _ := r.Value("policy.generation.colocated.enabled"); ok && col == false {
		gn, okN, dynN := r.Value("policy.generation.colocated.resources.num_nodes")
		// One node: NeMo-RL splits its GPUs between training and
		// generation, and generation's num_nodes must be 1 or null
		// (grpo.py setup), so only more nodes can be all taken.
		if n, isInt := AsInt(gn); okN && isInt && !dynN && n >= nodes && nodes > 1 {
			ds.Errorf(r.File, "policy.generation.colocated.resources.num_nodes",
				"found %d generation nodes (set by %s); expected fewer than cluster.num_nodes=%d so that training keeps nodes",
				n, r.Origin("policy.generation.colocated.resources.num_nodes"), nodes)
		}
	}
}

// ceiling prints an autoscaling ceiling; past the bound it has none.
func ceiling(n int64) string {
	if n > capacity.MaxNodes {
		return "no ceiling: maxReplicas unset"
	}
	return fmt.Sprint(n)
}

func autoscalingNote(c capacity.Cluster) string {
	if c.Autoscaling {
		return fmt.Sprintf("; the autoscaler can grow them to %s", ceiling(c.MaxGPUNodes))
	}
	return ""
}

// megatron: both backends on, or deleting optimizer kwargs Megatron needs.
func megatron(ds *diag.List, f string, r *effective.Recipe) {
	meg, _, _ := r.Value("policy.megatron_cfg.enabled")
	dt, _, _ := r.Value("policy.dtensor_cfg.enabled")
	if isTrue(meg) && isTrue(dt) {
		ds.Errorf(r.File, "policy.megatron_cfg.enabled", "found policy.megatron_cfg.enabled=true (set by %s) together with policy.dtensor_cfg.enabled=true (set by %s); expected exactly one training backend",
			r.Origin("policy.megatron_cfg.enabled"), r.Origin("policy.dtensor_cfg.enabled"))
	}
	if !isTrue(meg) {
		return
	}
	for _, o := range r.Overrides {
		k := o.Override.Key.String()
		if o.Override.Op == hydra.Delete && (k == "policy.optimizer.kwargs.foreach" || k == "policy.optimizer.kwargs.fused") {
			file := r.File
			if o.Origin == "entrypoint" {
				file = f
			}
			ds.Errorf(file, k, "override %q deletes a key Megatron's optimizer needs (it crashes at start-up); expected no deletion on a Megatron recipe (policy.megatron_cfg.enabled=true)", o.Override.Raw)
		}
	}
}

// bounds: node and worker-group counts a cluster can sanely ask for (the
// limits live in fn/analyse/capacity; the builder refuses them too). Both read what
// KubeRay would start (capacity.DesiredReplicas), which is also what the
// builder splits into segments: replicas 2^31-1 with maxReplicas 4 is 4.
func bounds(ds *diag.List, f string, rc profile.RoleCluster) {
	c := rc.Cluster
	if c.Spec == nil {
		return
	}
	base := "kuberay." + rc.Role
	var groups int64
	for i := range c.Spec.WorkerGroupSpecs {
		// Negative counts never get here: the profile's validation refuses
		// them with their field (profile.validateCounts).
		r := capacity.DesiredReplicas(&c.Spec.WorkerGroupSpecs[i])
		n := int64(1)
		if c.SegmentSize != nil && *c.SegmentSize > 0 && r > int64(*c.SegmentSize) {
			n = r / int64(*c.SegmentSize)
		}
		groups = capacity.Add(groups, n, capacity.MaxWorkerGroups)
	}
	if c.SegmentSize != nil && *c.SegmentSize > capacity.MaxNodes {
		ds.Errorf(f, base+".segmentSize", "found %d; expected at most %d (no cluster has more nodes)", *c.SegmentSize, capacity.MaxNodes)
	}
	if capacity.Count(c.Spec).OverBound() {
		ds.Errorf(f, base+".spec.workerGroupSpecs[*].replicas", "the worker groups add up to more than %d pods (replicas clamped to [minReplicas, maxReplicas] × numOfHosts, as KubeRay starts them); expected at most %d", capacity.MaxNodes, capacity.MaxNodes)
	}
	if groups > capacity.MaxWorkerGroups {
		ds.Errorf(f, base+".segmentSize", "segmentSize=%d splits the worker groups into more than %d groups; expected at most %d: raise segmentSize", c.SegmentSize.Value(0), capacity.MaxWorkerGroups, capacity.MaxWorkerGroups)
	}
}

func segments(ds *diag.List, f string, rc profile.RoleCluster) {
	c := rc.Cluster
	if c.SegmentSize == nil || c.Spec == nil || *c.SegmentSize <= 0 || *c.SegmentSize > capacity.MaxNodes {
		return
	}
	size := int64(*c.SegmentSize)
	for i := range c.Spec.WorkerGroupSpecs {
		g := &c.Spec.WorkerGroupSpecs[i]
		r := capacity.DesiredReplicas(g)
		if r > size && r%size != 0 {
			what := fmt.Sprintf("%d replicas", r)
			if g.Replicas == nil || int64(*g.Replicas) != r {
				what = fmt.Sprintf("%d replicas (replicas clamped to [minReplicas, maxReplicas], as KubeRay starts them)", r)
			}
			ds.Errorf(f, fmt.Sprintf("kuberay.%s.spec.workerGroupSpecs[%d].replicas", rc.Role, i),
				"found %s in group %q; expected a multiple of segmentSize=%d (kuberay.%s.segmentSize)", what, g.GroupName, size, rc.Role)
		}
	}
}

// webhookFields: GB300 clusters inject ephemeral-storage and readiness probes
// by admission webhook; a hand-written value fights the webhook.
func webhookFields(ds *diag.List, f string, rc profile.RoleCluster) {
	if rc.Cluster.Spec == nil {
		return
	}
	visit := func(base string, spec *corev1.PodSpec) {
		for i, c := range spec.Containers {
			cf := fmt.Sprintf("%s.containers[%d]", base, i)
			for kind, list := range map[string]corev1.ResourceList{"limits": c.Resources.Limits, "requests": c.Resources.Requests} {
				if _, ok := list[corev1.ResourceEphemeralStorage]; ok {
					ds.Errorf(f, cf+".resources."+kind+".ephemeral-storage", "is set by hand; expected it unset: the cluster's admission webhook injects ephemeral-storage")
				}
			}
			if c.ReadinessProbe != nil {
				ds.Errorf(f, cf+".readinessProbe", "is set by hand; expected it unset: the cluster's admission webhook injects the Ray readiness probe")
			}
		}
	}
	base := "kuberay." + rc.Role + ".spec"
	visit(base+".headGroupSpec.template.spec", &rc.Cluster.Spec.HeadGroupSpec.Template.Spec)
	for i := range rc.Cluster.Spec.WorkerGroupSpecs {
		visit(fmt.Sprintf("%s.workerGroupSpecs[%d].template.spec", base, i), &rc.Cluster.Spec.WorkerGroupSpecs[i].Template.Spec)
	}
}

// LooksSecret reports whether an env var name holds a credential (the rule
// is secrets.Name, shared with the output scan and the tests).
func LooksSecret(name string) bool { return secrets.Name(name) }

// secrets: a literal value under a credential-looking name is an inlined
// secret; the value itself is never repeated in the message.
func secretEnv(ds *diag.List, f string, infra *profile.Infra) {
	msg := "holds a literal value under a credential-looking name; expected valueFrom.secretKeyRef (or envFrom.secretRef) so the secret is referenced, never embedded"
	visit := func(base string, spec *corev1.PodSpec) {
		for _, group := range []struct {
			name string
			cs   []corev1.Container
		}{{"containers", spec.Containers}, {"initContainers", spec.InitContainers}} {
			for i, c := range group.cs {
				for j, e := range c.Env {
					if secrets.Literal(e.Value) && LooksSecret(e.Name) {
						ds.Errorf(f, fmt.Sprintf("%s.%s[%d].env[%d] (%s)", base, group.name, i, j, e.Name), "%s", msg)
					}
				}
			}
		}
	}
	for _, rc := range infra.Kuberay.ByRole() {
		if rc.Cluster.Spec == nil {
			continue
		}
		base := "kuberay." + rc.Role + ".spec"
		visit(base+".headGroupSpec.template.spec", &rc.Cluster.Spec.HeadGroupSpec.Template.Spec)
		for i := range rc.Cluster.Spec.WorkerGroupSpecs {
			visit(fmt.Sprintf("%s.workerGroupSpecs[%d].template.spec", base, i), &rc.Cluster.Spec.WorkerGroupSpecs[i].Template.Spec)
		}
		if d := rc.Cluster.Daemon; d != nil {
			for _, k := range tree.SortedKeys(d.Env) {
				if d.Env[k] != "" && LooksSecret(k) {
					ds.Errorf(f, "kuberay."+rc.Role+".daemon.env."+k, "%s", msg)
				}
			}
		}
	}
	for _, k := range tree.SortedKeys(infra.Deployments) {
		if d := infra.Deployments[k]; d != nil && d.Spec != nil {
			visit("deployments."+k+".spec.template.spec", &d.Spec.Template.Spec)
		}
	}
	for _, m := range []struct {
		field string
		env   map[string]string
	}{{"launch.env", infra.Launch.Env}, {"networking.extra_env", infra.Networking.ExtraEnv}, {"env", infra.Env}} {
		for _, k := range tree.SortedKeys(m.env) {
			if m.env[k] != "" && LooksSecret(k) {
				ds.Errorf(f, m.field+"."+k, "%s", msg)
			}
		}
	}
}

// defaultUploadPaths is nrl-k8s's built-in upload list (§7.4).
var defaultUploadPaths = []string{
	"nemo_rl", "examples", "infra/examples", "tests/check_metrics.py", "tests/json_dump_tb_logs.py",
	"3rdparty/Gym-workspace/Gym/nemo_gym", "3rdparty/Gym-workspace/Gym/resources_servers",
	"3rdparty/Gym-workspace/Gym/responses_api_models/vllm_model",
	"3rdparty/Gym-workspace/Gym/responses_api_agents/simple_agent",
	"3rdparty/Gym-workspace/Gym/pyproject.toml", "3rdparty/Gym-workspace/Gym/uv.lock",
	"3rdparty/Megatron-Bridge-workspace/Megatron-Bridge/3rdparty/Megatron-LM/megatron",
}

// UploadPaths is the list codeSource=upload stages.
func UploadPaths(infra *profile.Infra) []string {
	if len(infra.Launch.RayUploadPaths) > 0 {
		return infra.Launch.RayUploadPaths
	}
	return defaultUploadPaths
}

func upload(ds *diag.List, f string, infra *profile.Infra, p runparams.Params, size UploadSizer) {
	if infra.Launch.CodeSource != "upload" || p.Mode == runparams.Dev || infra.Kuberay.Training == nil {
		return // no training job: nothing runs code
	}
	ds.Warnf(f, "launch.codeSource", "is upload: a manifest cannot carry a local working dir, so the rendered jobs run the code baked into the image; expected codeSource image or lustre with codePath for a run that is fully described by its manifests")
	if size == nil {
		return
	}
	n, err := size(UploadPaths(infra))
	if err != nil {
		ds.Errorf(f, "launch.rayUploadPaths", "cannot measure the upload working dir: %v", err)
		return
	}
	if n > RayUploadLimit {
		ds.Errorf(f, "launch.rayUploadPaths", "the upload working dir is %d bytes (%.1f MiB); expected at most Ray's 100 MiB cap: trim rayUploadPaths or use codeSource image|lustre", n, float64(n)/(1<<20))
	}
}

func isTrue(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return strings.EqualFold(t, "true")
	}
	return false
}
