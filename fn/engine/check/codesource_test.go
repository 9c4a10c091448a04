package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
)

// launch.codeSource against the Ray containers' mounts: lustre needs a
// mount at codePath or above it, image warns about one; mounts below
// codePath are not judged.
func TestCodeSource(t *testing.T) {
	cluster := func(mount string) any {
		return objOf[rayv1.RayCluster](t, `metadata: {name: c}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: ray, volumeMounts: [{name: v, mountPath: `+mount+`}]}]}}}`)
	}
	job := objOf[rayv1.RayJob](t, "metadata: {name: j}\nspec: {rayClusterSpec: {headGroupSpec: {template: {spec: {containers: [{name: ray}]}}}}}")
	const head = ".headGroupSpec.template.spec.containers[0].volumeMounts"
	for _, tc := range []struct {
		name, profile string
		obj           any
		want          []string
	}{
		{"lustre mounted at codePath", "launch: {codeSource: lustre, codePath: /opt/code}", cluster("/opt/code"), nil},
		{"lustre mounted above codePath", "launch: {codeSource: lustre, codePath: /opt/code/}", cluster("/opt"), nil},
		{"lustre mounted below codePath", "launch: {codeSource: lustre, codePath: /opt/code}", cluster("/opt/code/pkg"), []string{"error p.yaml output RayCluster/c spec" + head}},
		{"lustre in a RayJob without mount", "launch: {codeSource: lustre, codePath: /opt/code}", job, []string{"error p.yaml output RayJob/j spec.rayClusterSpec" + head}},
		{"image hidden by a mount", "launch: {codeSource: image, codePath: /opt/code}", cluster("/"), []string{"warning p.yaml output RayCluster/c spec" + head}},
		{"image, a sibling mount", "launch: {codeSource: image, codePath: /opt/code}", cluster("/opt/codex"), nil},
		{"upload is not judged", "launch: {codeSource: upload, codePath: /opt/code}", cluster("/opt/code/pkg"), nil},
		{"no codePath", "launch: {codeSource: lustre}", cluster("/x"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := CodeSource("p.yaml", infraOf(t, tc.profile), []any{tc.obj})
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
