package preflight

import (
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
)

// GPUGroups lists the run's GPU pods as KubeRay will create them
// (fn/analyse/capacity's count: replicas clamped to [minReplicas, maxReplicas] ×
// numOfHosts) with the nodeSelector their pods carry. RayJobs
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
		owner := d.Kind + "/" + d.Name
		head := &spec.HeadGroupSpec.Template.Spec
		if gpus, _ := capacity.GPUsPerPod(head); gpus > 0 {
			out = append(out, GPUGroup{Owner: owner, Group: "head", Pods: 1, GPUsPerPod: gpus, NodeSelector: head.NodeSelector})
		}
		for _, g := range capacity.Count(spec).GPUGroups() {
			if g.Pods > 0 {
				out = append(out, GPUGroup{Owner: owner, Group: g.Name, Pods: g.Pods, GPUsPerPod: g.GPUsPerPod,
					NodeSelector: spec.WorkerGroupSpecs[g.Index].Template.Spec.NodeSelector})
			}
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
