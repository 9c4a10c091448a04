package preflight

import (
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/emit"
)

// GPUGroups lists the run's GPU worker groups as KubeRay will create them
// (fn/capacity's count) with the nodeSelector their pods carry. RayJobs
// that submit to an existing cluster (clusterSelector) create no pods.
func GPUGroups(docs []emit.Doc) ([]GPUGroup, error) {
	var out []GPUGroup
	for _, d := range docs {
		var spec *rayv1.RayClusterSpec
		switch d.Kind {
		case "RayCluster":
			var rc rayv1.RayCluster
			if err := fromData(d, &rc); err != nil {
				return nil, err
			}
			spec = &rc.Spec
		case "RayJob":
			var j rayv1.RayJob
			if err := fromData(d, &j); err != nil {
				return nil, err
			}
			spec = j.Spec.RayClusterSpec
		}
		if spec == nil {
			continue
		}
		suspended := spec.Suspend != nil && *spec.Suspend
		add := func(group string, pods int64, ps *corev1.PodSpec) {
			gpus, _ := capacity.GPUsPerPod(ps)
			if gpus > 0 && pods > 0 {
				out = append(out, GPUGroup{Owner: d.Kind + "/" + d.Name, Group: group, Pods: pods, GPUsPerPod: gpus, NodeSelector: ps.NodeSelector})
			}
		}
		add("head", 1, &spec.HeadGroupSpec.Template.Spec)
		for i := range spec.WorkerGroupSpecs {
			g := &spec.WorkerGroupSpecs[i]
			add(g.GroupName, capacity.WorkerPods(g, suspended), &g.Template.Spec)
		}
	}
	return out, nil
}

func fromData(d emit.Doc, into any) error {
	b, err := json.Marshal(d.Data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", d.Describe(), err)
	}
	return nil
}
