package check

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Placement warns about where the rendered pods would land: GPU workers
// without tolerations, heads on GPU nodes (what a scheduler's own keys
// mean for placement is its integration's CheckObjects). It reads the
// objects the build made (objs: Build's typed objects), after every
// profile key is applied, so a setting made the documented way
// (placement.tolerations, scheduler, ...) counts the same as one written
// into the spec, and a warning never names something the output does not
// say.
func Placement(file string, objs []any) diag.List {
	var ds diag.List
	for _, o := range objs {
		switch t := o.(type) {
		case *rayv1.RayJob:
			if t.Spec.RayClusterSpec != nil {
				placementOf(&ds, file, "RayJob/"+t.Name, "spec.rayClusterSpec", t.Spec.RayClusterSpec)
			}
		case *rayv1.RayCluster:
			placementOf(&ds, file, "RayCluster/"+t.Name, "spec", &t.Spec)
		}
	}
	return ds
}

func placementOf(ds *diag.List, file, ref, base string, spec *rayv1.RayClusterSpec) {
	where := "output " + ref + " " + base
	// The segments of one group are warned about once.
	index, names := capacity.FirstOfEachGroup(spec.WorkerGroupSpecs)
	for k, i := range index {
		g, name := &spec.WorkerGroupSpecs[i], names[k]
		gf := fmt.Sprintf("%s.workerGroupSpecs[%d].template", where, i)
		if n, _ := capacity.GPUsPerPod(&g.Template.Spec); n > 0 && len(g.Template.Spec.Tolerations) == 0 {
			ds.Warnf(file, gf+".spec.tolerations", "worker group %q requests %d GPUs per pod and its rendered pods have no tolerations; expected tolerations for the GPU nodes' taints (placement.tolerations adds them to every GPU worker), or its pods stay Pending on tainted GPU nodes", name, n)
		}
	}
	head := &spec.HeadGroupSpec.Template.Spec
	hf := where + ".headGroupSpec.template.spec"
	for k := range head.NodeSelector {
		if strings.HasPrefix(k, "nvidia.com/gpu") {
			ds.Warnf(file, hf+".nodeSelector."+k, "the head pod selects GPU nodes; expected a CPU node group (the head runs no GPU work)")
		}
	}
	if n, ok := capacity.GPUsPerPod(head); ok && n > 0 {
		ds.Warnf(file, hf+".containers[*].resources", "the head pod requests %d GPUs; expected none (the head runs no GPU work)", n)
	}
}
