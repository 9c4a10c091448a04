package kueue

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

func TestMultiKueueSetupReaders(t *testing.T) {
	u := func(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
	t.Run("KubeconfigSecret", func(t *testing.T) {
		for _, tc := range []struct {
			name              string
			source            map[string]any
			secret, elsewhere string
		}{
			{"a Secret", map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": "w1-kc"}}, "w1-kc", ""},
			{"Secret by default", map[string]any{"kubeConfig": map[string]any{"location": "w1-kc"}}, "w1-kc", ""},
			{"a path", map[string]any{"kubeConfig": map[string]any{"locationType": "Path", "location": "/etc/kc"}}, "", "locationType Path /etc/kc"},
			{"a ClusterProfile", map[string]any{"clusterProfileRef": map[string]any{"name": "p"}}, "", "ClusterProfile p"},
			{"nothing", nil, "", "no spec.clusterSource"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				secret, elsewhere := KubeconfigSecret(u(map[string]any{"spec": map[string]any{"clusterSource": tc.source}}))
				assert.Equal(t, tc.secret, secret)
				assert.Equal(t, tc.elsewhere, elsewhere)
			})
		}
	})
	t.Run("MultiKueueCheck", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			spec   map[string]any
			mk     bool
			config string
		}{
			{"MultiKueue's", map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
				"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "c"}}, true, "c"},
			{"parameters of another kind", map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
				"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "c"}}, true, ""},
			{"another controller", map[string]any{"controllerName": "kueue.x-k8s.io/provisioning-request"}, false, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mk, config := MultiKueueCheck(u(map[string]any{"spec": tc.spec}))
				assert.Equal(t, tc.mk, mk)
				assert.Equal(t, tc.config, config)
			})
		}
	})
	t.Run("Active, bounded", func(t *testing.T) {
		active, why := Active(u(map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Active", "status": "False", "reason": "BadConfig", "message": strings.Repeat("x", 5000)}}}}))
		assert.False(t, active)
		assert.True(t, strings.HasPrefix(why, "BadConfig: xxx"), why)
		assert.LessOrEqual(t, len(why), 2*scheduler.MaxReported+10)
		active, why = Active(u(map[string]any{}))
		assert.False(t, active)
		assert.Equal(t, "no Active condition yet", why)
	})
	assert.Equal(t, []string{"a", "b"}, QueueChecks(u(map[string]any{"spec": map[string]any{"admissionChecksStrategy": map[string]any{
		"admissionChecks": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{}}}}})))
}
