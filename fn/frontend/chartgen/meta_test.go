package chartgen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// A render needs of the cluster the first Kubernetes release serving every
// API version it emits (DRA's resource.k8s.io/v1 from 1.34), as a semver
// constraint that admits that release's pre-releases; none beyond
// Chart.yaml's otherwise.
func TestKubeVersion(t *testing.T) {
	doc := func(apiVersion any) rendered.Doc { return rendered.Doc{Data: map[string]any{"apiVersion": apiVersion}} }
	cases := []struct {
		name string
		docs []rendered.Doc
		want string
	}{
		{"no documents", nil, ""},
		{"API versions every release serves", []rendered.Doc{doc("ray.io/v1"), doc("v1")}, ""},
		{"DRA among them", []rendered.Doc{doc("ray.io/v1"), doc("resource.k8s.io/v1"), doc(nil)}, ">= 1.34.0-0"},
		{"DRA's beta is not it", []rendered.Doc{doc("resource.k8s.io/v1beta1")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, kubeVersion(tc.docs)) })
	}
}

// The chart's state value renders the run stopped or running.
func TestValuesState(t *testing.T) {
	require.Equal(t, runparams.Stopped, Values{stopped: true}.state())
	require.Equal(t, runparams.Running, Values{}.state())
}
