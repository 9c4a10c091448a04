package policy

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The shipped file is the default output, byte for byte (regenerate with
// `make golden` or `nrl-k8s policy > gitops/policy/started-run-policy.yaml`).
func TestGoldenShippedPolicy(t *testing.T) {
	b, err := YAML(Options{})
	require.NoError(t, err)
	golden.File(t, filepath.Join(testenv.RepoRoot(t), File), b)
}

func TestYAMLDeterministic(t *testing.T) {
	opts := Options{KubeRayUsers: []string{"u:b", "u:a"}, KueueUsers: []string{"u:c"}}
	first, err := YAML(opts)
	require.NoError(t, err)
	for range 5 {
		again, err := YAML(opts)
		require.NoError(t, err)
		require.Equal(t, string(first), string(again))
	}
}

// The controllers' identities are the exemption's usernames: the
// defaults, or the given ones (sorted, duplicates once), never both.
func TestControllerUsers(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"defaults", Options{}, "['" + DefaultKubeRayUser + "', '" + DefaultKueueUser + "']"},
		{"kuberay given", Options{KubeRayUsers: []string{"system:serviceaccount:ray-system:kuberay-operator"}},
			"['system:serviceaccount:kueue-system:kueue-controller-manager', 'system:serviceaccount:ray-system:kuberay-operator']"},
		{"several, duplicate", Options{KubeRayUsers: []string{"b", "a"}, KueueUsers: []string{"a"}}, "['a', 'b']"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Objects(c.opts)
			require.NoError(t, err)
			p := objs[0].(*admissionv1.ValidatingAdmissionPolicy)
			require.Equal(t, "not-a-controller", p.Spec.MatchConditions[0].Name)
			assert.Equal(t, "!(request.userInfo.username in "+c.want+")", p.Spec.MatchConditions[0].Expression)
		})
	}
}

// A username that would break out of the CEL string literal, or is no
// username, is refused naming the flag.
func TestBadUsers(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		flag string
	}{
		{"quote", Options{KubeRayUsers: []string{"a') || true || ('"}}, "--kuberay-user"},
		{"backslash", Options{KueueUsers: []string{`a\`}}, "--kueue-user"},
		{"empty", Options{KueueUsers: []string{""}}, "--kueue-user"},
		{"spaces", Options{KubeRayUsers: []string{" a"}}, "--kuberay-user"},
		{"newline", Options{KubeRayUsers: []string{"a\nb"}}, "--kuberay-user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := YAML(c.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.flag)
			assert.Contains(t, err.Error(), "expected a username")
		})
	}
}

// The policy holds the validations (cel_test.go) and binds itself with
// Deny.
func TestMessagesAndBinding(t *testing.T) {
	objs, err := Objects(Options{})
	require.NoError(t, err)
	p := objs[0].(*admissionv1.ValidatingAdmissionPolicy)
	assert.Equal(t, validations(), p.Spec.Validations)
	b := objs[1].(*admissionv1.ValidatingAdmissionPolicyBinding)
	assert.Equal(t, Name, b.Spec.PolicyName)
	assert.Equal(t, []admissionv1.ValidationAction{admissionv1.Deny}, b.Spec.ValidationActions)
	assert.Equal(t, []admissionv1.OperationType{admissionv1.Update}, p.Spec.MatchConstraints.ResourceRules[0].Operations,
		"creation and deletion are never refused")
}
