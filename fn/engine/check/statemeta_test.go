package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// The state key is found on an object or a pod template at any depth, and
// named where the profile writes it, else where the object carries it;
// an object without it, or another key, is no finding.
func TestStateMetadata(t *testing.T) {
	job := func(jobAnn, podLabels map[string]string) any {
		return &rayv1.RayJob{
			TypeMeta:   metav1.TypeMeta{Kind: "RayJob"},
			ObjectMeta: metav1.ObjectMeta{Name: "j", Annotations: jobAnn},
			Spec: rayv1.RayJobSpec{RayClusterSpec: &rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				{GroupName: "g", Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}}},
			}}},
		}
	}
	state := map[string]string{"nemo-rl.nvidia.com/state": "stopped"}
	for _, tc := range []struct {
		name    string
		profile string
		obj     any
		fields  []string
	}{
		{name: "none", obj: job(map[string]string{"a": "b"}, nil)},
		{name: "on the object, no profile path", obj: job(state, nil), fields: []string{"output RayJob/j metadata.annotations.nemo-rl.nvidia.com/state"}},
		{name: "on a worker template, no profile path", obj: job(nil, state),
			fields: []string{"output RayJob/j spec.rayClusterSpec.workerGroupSpecs[0].template.metadata.labels.nemo-rl.nvidia.com/state"}},
		{name: "written by the profile", obj: job(nil, state),
			profile: "kuberay:\n  training:\n    spec:\n      workerGroupSpecs:\n        - template: {metadata: {labels: {nemo-rl.nvidia.com/state: stopped}}}\n",
			fields:  []string{"kuberay.training.spec.workerGroupSpecs[0].template.metadata.labels.nemo-rl.nvidia.com/state"}},
		{name: "the key elsewhere in the profile is not a label", obj: job(state, nil),
			profile: "env: {nemo-rl.nvidia.com/state: x}\n",
			fields:  []string{"output RayJob/j metadata.annotations.nemo-rl.nvidia.com/state"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prof *tree.Map
			if tc.profile != "" {
				v, err := tree.Parse("p.yaml", []byte(tc.profile))
				require.NoError(t, err)
				prof = v.(*tree.Map)
			}
			ds := StateMetadata("p.yaml", prof, "--state", []any{tc.obj})
			var fields []string
			for _, d := range ds {
				fields = append(fields, d.Field)
				assert.Contains(t, d.Message, "expected the state parameter (--state stopped)")
			}
			assert.Equal(t, tc.fields, fields)
			assert.Equal(t, len(tc.fields) > 0, ds.HasErrors())
		})
	}
}
