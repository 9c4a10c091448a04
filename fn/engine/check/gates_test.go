package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// Each gate runs its rules; Documents stops at a document that does not
// read back, or at an output credential, before judging pods.
func TestGates(t *testing.T) {
	pod := "kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, securityContext: {privileged: true}}]}"
	baseline := infraOf(t, "podSecurity: baseline")
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) []string
		want []string
	}{
		{"Objects judges the code source", func(t *testing.T) []string {
			c := objOf[rayv1.RayCluster](t, "metadata: {name: c}\nspec: {headGroupSpec: {template: {spec: {containers: [{name: ray}]}}}}")
			return found(Objects("p.yaml", infraOf(t, "launch: {codeSource: lustre, codePath: /code}"), []any{c}))
		}, []string{"error p.yaml output RayCluster/c spec.headGroupSpec.template.spec.containers[0].volumeMounts"}},
		{"Documents judges Pod Security", func(t *testing.T) []string {
			return found(Documents("p.yaml", baseline, []rendered.Doc{docOf(t, pod)}))
		}, []string{"error p.yaml output Pod/p.spec.containers[0].securityContext.privileged", "info p.yaml podSecurity"}},
		{"Documents without a declared level", func(t *testing.T) []string {
			return found(Documents("p.yaml", &profile.Infra{}, []rendered.Doc{docOf(t, pod)}))
		}, []string{"warning p.yaml output Pod/p.spec.containers[0].securityContext.privileged", "info p.yaml podSecurity"}},
		{"Documents stops at an undecodable document", func(t *testing.T) []string {
			return found(Documents("p.yaml", baseline, []rendered.Doc{docOf(t, pod+"\nstatus: {phase: [x]}")}))
		}, []string{"error p.yaml output Pod/p"}},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, tc.run(t)) })
	}
}
