package manifest

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
)

// splitSegments replaces each worker group of R replicas with R/size groups
// `<group>-segment-<i>` of size replicas each, so KAI can place every segment
// in one topology domain. A group no larger than size is kept as is; R not
// divisible by size is an error. R is what KubeRay would start for the
// group (capacity.DesiredReplicas: replicas clamped to [minReplicas,
// maxReplicas]), so splitting changes how the workers are grouped, never
// how many start; nrl-k8s splits `replicas` as written (docs/deviations.md).
func splitSegments(groups []rayv1.WorkerGroupSpec, size int32) ([]rayv1.WorkerGroupSpec, error) {
	var out []rayv1.WorkerGroupSpec
	for _, g := range groups {
		r := capacity.DesiredReplicas(&g)
		if r <= int64(size) {
			out = append(out, g)
			continue
		}
		if r%int64(size) != 0 {
			name := g.GroupName
			if name == "" {
				name = "<unnamed>"
			}
			return nil, fmt.Errorf("workerGroup '%s' has replicas=%d which is not evenly divisible by segmentSize=%d", name, r, size)
		}
		base := g.GroupName
		if base == "" {
			base = "workers"
		}
		if int64(len(out))+r/int64(size) > capacity.MaxWorkerGroups {
			return nil, fmt.Errorf("segmentSize=%d splits replicas=%d into more than %d worker groups", size, r, capacity.MaxWorkerGroups)
		}
		for i := int64(0); i < r/int64(size); i++ {
			seg := *g.DeepCopy()
			seg.GroupName = capacity.SegmentName(base, i)
			seg.Replicas, seg.MinReplicas, seg.MaxReplicas = ptr(size), ptr(size), ptr(size)
			out = append(out, seg)
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
