package kustomizeconf

import (
	"reflect"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// deep nests a pod template nine levels down, past the walk's bound.
type deep struct {
	A struct {
		B struct {
			C struct {
				D struct {
					E struct {
						F struct {
							G struct {
								H struct {
									I struct {
										T corev1.PodTemplateSpec `json:"t"`
									} `json:"i"`
								} `json:"h"`
							} `json:"g"`
						} `json:"f"`
					} `json:"e"`
				} `json:"d"`
			} `json:"c"`
		} `json:"b"`
	} `json:"a"`
}

// Pod templates are found from the Go type wherever they nest (through
// pointers and lists), never under status, an untagged or skipped field,
// or deeper than the walk goes.
func TestPodTemplates(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want []string
	}{
		{"RayJob", reflect.TypeFor[rayv1.RayJob](), []string{"spec/rayClusterSpec/headGroupSpec/template",
			"spec/rayClusterSpec/workerGroupSpecs/template", "spec/submitterPodTemplate"}},
		{"RayCluster", reflect.TypeFor[rayv1.RayCluster](), []string{"spec/headGroupSpec/template", "spec/workerGroupSpecs/template"}},
		{"Deployment", reflect.TypeFor[appsv1.Deployment](), []string{"spec/template"}},
		{"pointers, lists, status and untagged fields", reflect.TypeFor[struct {
			P *struct {
				T *corev1.PodTemplateSpec `json:"t,omitempty"`
			} `json:"p"`
			L []struct {
				T corev1.PodTemplateSpec `json:"t"`
			} `json:"l"`
			Status corev1.PodTemplateSpec `json:"status"`
			Skip   corev1.PodTemplateSpec `json:"-"`
			Bare   corev1.PodTemplateSpec
		}](), []string{"p/t", "l/t"}},
		{"deeper than the walk", reflect.TypeFor[deep](), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, PodTemplates(tc.typ)) })
	}
}

// The configuration names every reference of every pod template (and the
// ones outside templates) for kustomize's nameReference, and every pod
// template's labels; kustomize_test.go builds with it.
func TestConfiguration(t *testing.T) {
	type fieldSpec struct{ Group, Kind, Path string }
	var conf struct {
		NameReference []struct {
			Group, Version, Kind string
			FieldSpecs           []fieldSpec `json:"fieldSpecs"`
		} `json:"nameReference"`
		TemplateLabels []fieldSpec `json:"templateLabels"`
		CommonLabels   []fieldSpec `json:"commonLabels"`
	}
	require.NoError(t, yaml.UnmarshalStrict(Configuration(), &conf))
	cases := []struct {
		kind, group, version string
		specs                int // 5 pod templates × the paths below one
		has                  fieldSpec
	}{
		{"ConfigMap", "", "v1", 5 * 6, fieldSpec{"ray.io", "RayJob", "spec/submitterPodTemplate/spec/volumes/configMap/name"}},
		{"Secret", "", "v1", 5 * 7, fieldSpec{"ray.io", "RayCluster", "spec/workerGroupSpecs/template/spec/imagePullSecrets/name"}},
		{"ServiceAccount", "", "v1", 5, fieldSpec{"ray.io", "RayCluster", "spec/headGroupSpec/template/spec/serviceAccountName"}},
		{"PersistentVolumeClaim", "", "v1", 5, fieldSpec{"ray.io", "RayJob", "spec/rayClusterSpec/workerGroupSpecs/template/spec/volumes/persistentVolumeClaim/claimName"}},
		{"ResourceClaimTemplate", "resource.k8s.io", "", 5, fieldSpec{"ray.io", "RayJob", "spec/rayClusterSpec/workerGroupSpecs/template/spec/resourceClaims/resourceClaimTemplateName"}},
		{"ComputeDomain", "resource.nvidia.com", "", 5 + 1, fieldSpec{"resource.nvidia.com", "ComputeDomain", "spec/channel/resourceClaimTemplate/name"}},
		{"Service", "", "v1", 5*2 + 2, fieldSpec{"apps", "Deployment", "spec/template/spec/containers/env/value"}},
		{"RayCluster", "ray.io", "", 1, fieldSpec{"ray.io", "RayJob", `spec/clusterSelector/ray.io\/cluster`}},
	}
	require.Len(t, conf.NameReference, len(cases))
	for i, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			r := conf.NameReference[i]
			require.Equal(t, []string{tc.kind, tc.group, tc.version}, []string{r.Kind, r.Group, r.Version})
			require.Len(t, r.FieldSpecs, tc.specs)
			require.Contains(t, r.FieldSpecs, tc.has)
		})
	}
	var templates []fieldSpec
	for _, k := range Kinds {
		for _, p := range PodTemplates(k.Type) {
			templates = append(templates, fieldSpec{k.Group, k.Kind, p + "/metadata/labels"})
		}
	}
	require.Equal(t, templates, conf.TemplateLabels)
	require.Equal(t, templates, conf.CommonLabels)
}
