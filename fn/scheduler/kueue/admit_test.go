package kueue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kueue merges the nodeLabels of every flavor assigned to a pod set into
// its nodeSelector, a CPU head's included: a single GPU flavor covering
// cpu pins the head to GPU labels. A pod set selecting another value of a
// flavor's label key skips that flavor.
func TestKueueAdmit(t *testing.T) {
	flavors := map[string]Flavor{
		"gb300": {Name: "gb300", NodeLabels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-GB300"},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
		"cpu":     {Name: "cpu", NodeLabels: map[string]string{"nodeGroup": "customer-cpu"}},
		"tainted": {Name: "tainted", NodeTaints: []corev1.Taint{{Key: "reserved", Effect: corev1.TaintEffectNoSchedule}}},
	}
	head := &corev1.PodSpec{NodeSelector: map[string]string{"nodeGroup": "customer-cpu"}}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("48")}
	cases := []struct {
		name   string
		groups []ResourceGroup
		want   map[string]string
		used   []string
		err    string
	}{
		{"one GPU flavor covers cpu: the head gets GPU labels",
			[]ResourceGroup{{Covered: []corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu"}, Flavors: []string{"gb300"}}},
			map[string]string{"nodeGroup": "customer-cpu", "nvidia.com/gpu.product": "NVIDIA-GB300"}, []string{"gb300"}, ""},
		{"a CPU flavor first: the head keeps its nodes",
			[]ResourceGroup{{Covered: []corev1.ResourceName{"cpu", "memory"}, Flavors: []string{"cpu", "gb300"}}},
			map[string]string{"nodeGroup": "customer-cpu"}, []string{"cpu"}, ""},
		{"an untolerated flavor taint is skipped",
			[]ResourceGroup{{Covered: []corev1.ResourceName{"cpu"}, Flavors: []string{"tainted", "gb300"}}},
			map[string]string{"nodeGroup": "customer-cpu", "nvidia.com/gpu.product": "NVIDIA-GB300"}, []string{"gb300"}, ""},
		{"no flavor fits",
			[]ResourceGroup{{Covered: []corev1.ResourceName{"cpu"}, Flavors: []string{"tainted"}}},
			nil, nil, "untolerated taint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Admit(head, cpu, c.groups, flavors)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got.Spec.NodeSelector)
			assert.Equal(t, c.used, got.Flavors)
			assert.Equal(t, map[string]string{"nodeGroup": "customer-cpu"}, head.NodeSelector, "the input is not changed")
		})
	}
}

// A pod set selecting another value of a flavor's label key never gets
// that flavor: with no other, Kueue cannot admit it.
func TestKueueAdmitNoFlavorMatches(t *testing.T) {
	flavors := map[string]Flavor{
		"a": {Name: "a"},
		"b": {Name: "b", NodeLabels: map[string]string{"zone": "z1"}},
	}
	spec := &corev1.PodSpec{NodeSelector: map[string]string{"zone": "z2"}}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "example.com/x": resource.MustParse("1")}
	_, err := Admit(spec, req, []ResourceGroup{{Covered: []corev1.ResourceName{"cpu"}, Flavors: []string{"a"}}, {Covered: []corev1.ResourceName{"example.com/x"}, Flavors: []string{"b"}}}, flavors)
	require.ErrorContains(t, err, "flavor b doesn't match node affinity")
}
