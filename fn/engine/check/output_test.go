package check

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// Every document is read back strictly into its type; its metadata, its
// pods and KubeRay's rules are judged; an object etcd would refuse is too
// big whatever it holds.
func TestOutput(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"valid ConfigMap", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c, namespace: ns}\ndata: {a: b}", ""},
		{"a kind without Go type", "kind: ComputeDomain\napiVersion: resource.nvidia.com/v1beta1\nmetadata: {name: cd, namespace: ns}\nspec: {numNodes: 2}", ""},
		{"unknown field", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c, namespace: ns}\ndatum: {a: b}", "error p.yaml output ConfigMap/c"},
		{"wrong type", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c, namespace: ns}\ndata: [a]", "error p.yaml output ConfigMap/c"},
		{"bad name", "kind: Service\napiVersion: v1\nmetadata: {name: a.b, namespace: ns}", "error p.yaml output Service/a.b.metadata.name"},
		{"pod rule", "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: d, namespace: ns}\nspec: {replicas: -1, selector: {}, template: {spec: {containers: [{name: c}]}}}", "error p.yaml output Deployment/d.spec.replicas"},
		{"KubeRay rule", "kind: RayCluster\napiVersion: ray.io/v1\nmetadata: {name: c, namespace: ns}\nspec: {headGroupSpec: {template: {spec: {containers: []}}}}", "error p.yaml output RayCluster/c"},
		{"too big", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c, namespace: ns}\ndata: {a: " + strings.Repeat("x", MaxObjectBytes) + "}", "error p.yaml output ConfigMap/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Output("p.yaml", []rendered.Doc{docOf(t, tc.doc)})
			require.Equal(t, tc.want, strings.Join(found(ds), "; "), "%v", ds)
		})
	}
}
