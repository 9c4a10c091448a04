package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// sameExcept compares both ways (a key only in b is a difference too),
// the skipped keys left out of each; what it means is proved against the
// real API server (tests/kueue, TestStartedRunPolicy).
func TestSameExcept(t *testing.T) {
	cases := []struct {
		name string
		skip []string
		want string
	}{
		{"one key skipped", []string{"x"}, "a.all(k, k in ['x'] || (k in b && b[k] == a[k])) && b.all(k, k in ['x'] || k in a)"},
		{"two keys skipped", []string{"x", "y"}, "a.all(k, k in ['x', 'y'] || (k in b && b[k] == a[k])) && b.all(k, k in ['x', 'y'] || k in a)"},
		{"none skipped", nil, "a.all(k, k in [] || (k in b && b[k] == a[k])) && b.all(k, k in [] || k in a)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, sameExcept("a", "b", tc.skip)) })
	}
}

// sameTemplate compares the pod spec, and the labels and annotations
// both ways but Kueue's marks, through optional values.
func TestSameTemplate(t *testing.T) {
	got := sameTemplate("a", "b")
	for _, want := range []string{
		"a.?spec.orValue({}) == b.?spec.orValue({})",
		"a.?metadata.?labels.orValue({}).all(t, t.startsWith('kueue.x-k8s.io/') || b.?metadata.?labels[?t] == a.?metadata.?labels[?t])",
		"b.?metadata.?labels.orValue({}).all(t, t.startsWith('kueue.x-k8s.io/') || a.?metadata.?labels[?t].hasValue())",
		"a.?metadata.?annotations.orValue({}).all(t, t.startsWith('kueue.x-k8s.io/') || b.?metadata.?annotations[?t] == a.?metadata.?annotations[?t])",
		"b.?metadata.?annotations.orValue({}).all(t, t.startsWith('kueue.x-k8s.io/') || a.?metadata.?annotations[?t].hasValue())",
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 4, strings.Count(got, " && "), "the spec and four map comparisons: %s", got)
}

// Each refusal names the field and the way that takes effect; the worker
// counts KubeRay applies live are compared on their own (let through when
// the run scales live), and left out of the worker group comparison.
func TestValidations(t *testing.T) {
	vs := validations()
	require.Len(t, vs, 7)
	for _, v := range vs {
		assert.True(t, strings.HasSuffix(v.Message, "; "+Way), v.Message)
	}
	byMessage := func(prefix string) string {
		for _, v := range vs {
			if strings.HasPrefix(v.Message, prefix) {
				return v.Expression
			}
		}
		t.Fatalf("no validation %q", prefix)
		return ""
	}
	cases := []struct {
		name, message string
		want          []string
	}{
		{"the entrypoint, of a RayJob only", "spec.entrypoint of a started run", []string{"!variables.rayJob || object.spec.?entrypoint.orValue('') == oldObject.spec.?entrypoint.orValue('')"}},
		{"the rest of a RayJob's spec", "the spec of a started RayJob", []string{"!variables.rayJob || ", "['entrypoint', 'rayClusterSpec', 'suspend']"}},
		{"the cluster spec but its groups", "the cluster spec of a started run", []string{"['headGroupSpec', 'suspend', 'workerGroupSpecs']"}},
		{"the head group", "the head group of a started run", []string{"variables.newHead.?template.?spec.orValue({})"}},
		{"the worker groups, the counts left out", "the worker groups of a started run", []string{
			"size(variables.oldWorkers) == size(variables.newWorkers)", "h.groupName == g.groupName",
			"['scaleStrategy', 'template', '" + strings.Join(review.LiveRayClusterFields, "', '") + "']"}},
		{"the counts unless live", "the worker counts", []string{"variables.liveScale || ", "g.?maxReplicas == h.?maxReplicas && g.?minReplicas == h.?minReplicas && g.?replicas == h.?replicas"}},
		{"the Kueue queue", "the Kueue queue label kueue.x-k8s.io/queue-name", []string{"variables.oldQueue == variables.newQueue"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := byMessage(tc.message)
			for _, w := range tc.want {
				assert.Contains(t, e, w)
			}
		})
	}
}
