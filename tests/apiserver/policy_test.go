package apiserver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
)

// The started-run policy and its binding, with the default and with named
// controller identities, pass the API server's dry run, which compiles
// every CEL expression; a policy whose CEL does not compile is refused
// (so the dry run does judge the CEL). tests/kueue (TestStartedRunPolicy)
// runs the policy against real edits.
func TestStartedRunPolicyCompiles(t *testing.T) {
	srv := apiserver.Shared(t)
	ctx := context.Background()
	cases := []struct {
		name string
		opts policy.Options
	}{
		{"defaults", policy.Options{}},
		{"named identities", policy.Options{
			KubeRayUsers: []string{"system:serviceaccount:ray-system:kuberay-operator", "system:serviceaccount:ray-system:kuberay-operator-2"},
			KueueUsers:   []string{"system:serviceaccount:kueue:kueue-controller-manager"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := policy.Objects(c.opts)
			require.NoError(t, err)
			for _, o := range objs {
				m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
				require.NoError(t, err)
				require.NoError(t, srv.DryRunApply(ctx, &unstructured.Unstructured{Object: m}))
			}
		})
	}
	t.Run("broken CEL", func(t *testing.T) {
		objs, err := policy.Objects(policy.Options{})
		require.NoError(t, err)
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(objs[0])
		require.NoError(t, err)
		u := &unstructured.Unstructured{Object: m}
		validations, _, err := unstructured.NestedSlice(m, "spec", "validations")
		require.NoError(t, err)
		validations[0].(map[string]any)["expression"] = "object.spec.entrypoint =="
		require.NoError(t, unstructured.SetNestedSlice(m, validations, "spec", "validations"))
		err = srv.DryRunApply(ctx, u)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "spec.validations[0].expression")
	})
}
