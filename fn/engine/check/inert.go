package check

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// inert warns about profile keys that are accepted (nrl-k8s's schema has
// them) but change nothing in the manifests, naming where the setting goes
// instead. The keys that do take effect are applied in fn/engine/manifest
// (profilekeys.go): scheduler kai and kueue, placement nodeSelector/tolerations,
// checkpoints, hf_cache.
func inert(ds *diag.List, f string, in *profile.Infra) {
	warn := func(field, where string) {
		ds.Warnf(f, field, "is set but changes nothing in the manifests (nrl-k8s declares it and never applies it either); expected the setting %s", where)
	}
	if len(in.Placement.NodeSelector) > 0 || len(in.Placement.Tolerations) > 0 {
		gpuWorkers := false
		for _, rc := range in.Kuberay.ByRole() {
			if rc.Cluster.Spec == nil {
				continue
			}
			for i := range rc.Cluster.Spec.WorkerGroupSpecs {
				n, _ := capacity.GPUsPerPod(&rc.Cluster.Spec.WorkerGroupSpecs[i].Template.Spec)
				gpuWorkers = gpuWorkers || n > 0
			}
		}
		if !gpuWorkers {
			warn("placement", "in the pod specs under kuberay.<role>.spec: placement goes to GPU workers only, and no worker group requests nvidia.com/gpu")
		}
	}
	if len(in.Placement.Affinity) > 0 {
		warn("placement.affinity", "in kuberay.<role>.spec.workerGroupSpecs[*].template.spec.affinity (merging it into a spec's own affinity has no single meaning)")
	}
	n := in.Networking
	if n.HostNetwork {
		warn("networking.hostNetwork", "as hostNetwork: true in the pod specs under kuberay.<role>.spec")
	}
	for _, e := range []struct {
		field, env string
		set        bool
	}{
		{"networking.gloo_socket_ifname", "GLOO_SOCKET_IFNAME", n.GlooSocketIfname != nil},
		{"networking.nccl_socket_ifname", "NCCL_SOCKET_IFNAME", n.NCCLSocketIfname != nil},
		{"networking.nccl_ib_disable", "NCCL_IB_DISABLE", n.NCCLIBDisable},
		{"networking.nccl_net", "NCCL_NET", n.NCCLNet != nil},
	} {
		if e.set {
			warn(e.field, "as env "+e.env+" in the containers under kuberay.<role>.spec")
		}
	}
	if len(n.ExtraEnv) > 0 {
		warn("networking.extra_env", "in the containers' env under kuberay.<role>.spec, or in launch.env for the training entrypoint")
	}
	if in.Workspace.Kind != "rayUpload" {
		warn("workspace", "as volumes and volumeMounts in the pod specs under kuberay.<role>.spec, as the shipped profiles mount rl-workspace (only the dev pod mounts workspace.pvcName)")
	}
	if in.RayVersion != nil {
		warn("rayVersion", "in kuberay.<role>.spec.rayVersion")
	}
	for _, r := range []struct {
		role string
		res  profile.RoleResources
	}{{"training", in.Resources.Training}, {"generation", in.Resources.Generation}, {"gym", in.Resources.Gym}} {
		for _, node := range []struct {
			name string
			n    profile.NodeResources
		}{{"head", r.res.Head}, {"worker", r.res.Worker}} {
			if node.n.CPU != nil || node.n.Memory != nil || node.n.GPU != nil {
				warn("resources."+r.role+"."+node.name, "as resources in the containers under kuberay."+r.role+".spec")
			}
		}
	}
}
