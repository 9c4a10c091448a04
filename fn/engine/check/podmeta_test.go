package check

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
)

// The pods KubeRay creates carry the template's metadata and KubeRay's own
// labels: 280 KB of worker annotations, a group name with an underscore (a
// pod name the API server refuses) and a good cluster are told apart.
func TestPodMetadata(t *testing.T) {
	cluster := func(group string, annotations map[string]string) []rendered.Doc {
		rc := &rayv1.RayCluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
			Spec: rayv1.RayClusterSpec{
				HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "h"}}}}},
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: group, Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "w"}}},
				}}},
			},
		}
		d, err := emit.ToDoc(rc)
		require.NoError(t, err)
		return []rendered.Doc{d}
	}
	require.Empty(t, PodMetadata("p.yaml", cluster("gpu", nil)))

	big := PodMetadata("p.yaml", cluster("gpu", map[string]string{"note": strings.Repeat("x", 280<<10)}))
	require.Len(t, big, 1)
	require.Equal(t, "output RayCluster/c.spec.workerGroupSpecs[0].template.metadata", big[0].Field)
	require.Contains(t, big[0].Message, "may not be more than 262144 bytes")

	under := PodMetadata("p.yaml", cluster("gpu_a", nil))
	require.Len(t, under, 1)
	require.Contains(t, under[0].Message, `KubeRay names the worker group gpu_a pods "c-gpu_a-worker-" plus 5 characters`)
}
