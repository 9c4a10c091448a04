package admission

import (
	"fmt"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// FuzzKubeRayRulesAgree applies any sequence of mutations, so rules meet in
// combinations no table lists.
func FuzzKubeRayRulesAgree(f *testing.F) {
	baseJob := base[rayv1.RayJob](f, runparams.RayJob, "RayJob")
	baseCluster := base[rayv1.RayCluster](f, runparams.RayCluster, "RayCluster")
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{200, 3, 17, 9})
	f.Add([]byte{255})
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 12 {
			picks = picks[:12]
		}
		job := baseJob.DeepCopy()
		cluster := baseCluster.DeepCopy()
		for _, p := range picks {
			n := int(p) % (len(jobMutations) + len(clusterMutations))
			if n < len(jobMutations) {
				jobMutations[n].apply(job)
				continue
			}
			m := clusterMutations[n-len(jobMutations)]
			m.apply(&cluster.Spec, &cluster.ObjectMeta)
			if job.Spec.RayClusterSpec != nil {
				m.apply(job.Spec.RayClusterSpec, &job.ObjectMeta)
			}
		}
		differential(t, fmt.Sprintf("%v", picks), job)
		differential(t, fmt.Sprintf("%v", picks), cluster)
	})
}
