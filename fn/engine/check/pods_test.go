package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func i32(v int32) *int32 { return &v }

// One case per rule, each with a single defect; the field path is what the
// user reads.
func TestPodRules(t *testing.T) {
	worker := func(edit func(*rayv1.WorkerGroupSpec)) *rayv1.RayCluster {
		g := rayv1.WorkerGroupSpec{GroupName: "gpu", Replicas: i32(2), NumOfHosts: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w"}}}}}
		edit(&g)
		return &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{g}}}
	}
	for _, tc := range []struct {
		name  string
		obj   any
		field string // "" for no error
	}{
		{"a valid worker", worker(func(*rayv1.WorkerGroupSpec) {}), ""},
		{"negative replicas", worker(func(g *rayv1.WorkerGroupSpec) { g.Replicas = i32(-1) }), "spec.workerGroupSpecs[0].replicas"},
		{"negative numOfHosts", worker(func(g *rayv1.WorkerGroupSpec) { g.NumOfHosts = -1 }), "spec.workerGroupSpecs[0].numOfHosts"},
		{"pod-level GPU", worker(func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}
		}), "spec.workerGroupSpecs[0].template.spec.resources.limits[nvidia.com/gpu]"},
		{"pod-level cpu, memory and hugepages are fine", worker(func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("2Mi")}}
		}), ""},
		{"negative container quantity", worker(func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("-1")}
		}), "spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests[nvidia.com/gpu]"},
		{"env value and valueFrom", worker(func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "v", ValueFrom: &corev1.EnvVarSource{}}}
		}), "spec.workerGroupSpecs[0].template.spec.containers[0].env[0]"},
		{"claim with no source", worker(func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "ib"}}
		}), "spec.workerGroupSpecs[0].template.spec.resourceClaims[0]"},
		{"claim with two sources", worker(func(g *rayv1.WorkerGroupSpec) {
			a, b := "t", "c"
			g.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "ib", ResourceClaimTemplateName: &a, ResourceClaimName: &b}}
		}), "spec.workerGroupSpecs[0].template.spec.resourceClaims[0]"},
		{"claim from a template", worker(func(g *rayv1.WorkerGroupSpec) {
			a := "t"
			g.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "ib", ResourceClaimTemplateName: &a}}
		}), ""},
		{"negative Deployment replicas", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: i32(-1)}}, "spec.replicas"},
		{"RayJob paths start at its cluster spec", &rayv1.RayJob{Spec: rayv1.RayJobSpec{RayClusterSpec: &worker(func(g *rayv1.WorkerGroupSpec) { g.Replicas = i32(-1) }).Spec}},
			"spec.rayClusterSpec.workerGroupSpecs[0].replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := podRules(tc.obj)
			if tc.field == "" {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, tc.field, errs[0].Field)
		})
	}
}
