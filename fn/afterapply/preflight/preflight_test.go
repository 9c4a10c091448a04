package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

func TestPodSecurityLine(t *testing.T) {
	cases := []struct {
		name, need string
		nsOut      kube.Outcome
		labels     map[string]string
		want       State
	}{
		{"privileged namespace admits privileged", "privileged", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, OK},
		{"baseline namespace refuses privileged", "privileged", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, Missing},
		{"restricted namespace refuses baseline", "baseline", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}, Missing},
		{"baseline namespace admits restricted", "restricted", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, OK},
		{"no label: the cluster default is unknown", "baseline", kube.Found, nil, CannotTell},
		{"no label, restricted fits any default", "restricted", kube.Found, nil, OK},
		{"unknown level", "baseline", kube.Found, map[string]string{"pod-security.kubernetes.io/enforce": "strict"}, CannotTell},
		{"namespace unreadable", "baseline", kube.Forbidden, nil, CannotTell},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := podSecurityLine(Space{Namespace: "ns", PodSecurity: c.need, PodSecurityReason: []string{"IPC_LOCK"}}, c.nsOut, c.labels)
			assert.Equal(t, c.want, l.State, l.Detail)
			if c.want == Missing {
				assert.Contains(t, l.Detail, "IPC_LOCK")
			}
		})
	}
}

func TestVersionsOf(t *testing.T) {
	got := versionsOf("ray.io", []string{"ray.io/v1", "v1", "resource.k8s.io/v1", "ray.io/v1", "ray.io/v1alpha1"})
	assert.Equal(t, []string{"ray.io/v1", "ray.io/v1alpha1"}, got)
}

func TestOptional(t *testing.T) {
	l := optional(Line{Need: Need{Kind: "Secret", Optional: true}, State: Missing})
	assert.Equal(t, OK, l.State)
	l = optional(Line{Need: Need{Kind: "Secret"}, State: Missing})
	assert.Equal(t, Missing, l.State)
}
