package review

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
)

// Every control Pod Security's baseline level judges is a privilege: for
// each baseline check of the upstream policy library, a pod that check
// refuses (verified with the check itself) has a privilege a benign pod has
// not. A check added upstream without a fixture here fails the test.
func TestEveryBaselineControlIsAPrivilege(t *testing.T) {
	sc := func(f func(*corev1.SecurityContext)) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{}
			f(s.Containers[0].SecurityContext)
		}
	}
	fixtures := map[policy.CheckID]func(*corev1.PodSpec){
		"windowsHostProcess": func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}}
		},
		"hostNamespaces": func(s *corev1.PodSpec) { s.HostIPC = true },
		"privileged":     sc(func(c *corev1.SecurityContext) { c.Privileged = ptr.To(true) }),
		"capabilities_baseline": sc(func(c *corev1.SecurityContext) {
			c.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}
		}),
		"hostPathVolumes": func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		},
		"hostPorts": func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		},
		"appArmorProfile": sc(func(c *corev1.SecurityContext) {
			c.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}),
		"seLinuxOptions": sc(func(c *corev1.SecurityContext) { c.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }),
		"procMount":      sc(func(c *corev1.SecurityContext) { c.ProcMount = ptr.To(corev1.UnmaskedProcMount) }),
		"seccompProfile_baseline": sc(func(c *corev1.SecurityContext) {
			c.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}),
		"sysctls": func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}
		},
		"hostProbesAndHostLifecycle": func(s *corev1.PodSpec) {
			s.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "169.254.169.254"}}}
		},
	}
	benign := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	none := map[string]bool{}
	templatePrivileges(benign(), none)
	require.Empty(t, none)
	for _, check := range policy.DefaultChecks() {
		if check.Level != psaapi.LevelBaseline {
			continue
		}
		t.Run(string(check.ID), func(t *testing.T) {
			fixture, ok := fixtures[check.ID]
			require.True(t, ok, "no fixture for Pod Security's baseline check %s: add one, and a privilege control if none names it", check.ID)
			tmpl := benign()
			fixture(&tmpl.Spec)
			latest := check.Versions[len(check.Versions)-1]
			require.False(t, latest.CheckPod(&metav1.ObjectMeta{}, &tmpl.Spec).Allowed, "the fixture must be one the check refuses")
			got := map[string]bool{}
			templatePrivileges(tmpl, got)
			require.NotEmpty(t, got, "a pod %s refuses has no privilege", check.ID)
		})
	}
}
