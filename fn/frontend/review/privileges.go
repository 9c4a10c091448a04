package review

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Privileges are what a run's pods may do beyond what Pod Security's
// baseline level forbids, and what reaches outside the pod's own sandbox
// beside it (runtime class, host name and DNS overrides, a Service exposed
// outside the cluster). A run's level alone is not its privilege: inside
// a run that is privileged already, an unsafe sysctl or an unconfined
// AppArmor profile is one more thing it can do. Each privilege is a short
// stable string ("sysctl kernel.msgmax", "capability SYS_ADMIN"), the
// union over the run's pod templates: regrouping workers or renaming a
// container changes none of them. The gate (gate.go) refuses a privilege
// the base did not have unless the base branch's allow-list names it.

// privilegeControls are the pod template's privileges, control by control
// in Pod Security's baseline order, then the fields beyond it. Each
// returns the control's values ("" for a control without one).
var privilegeControls = []struct {
	name   string
	values func(*corev1.PodSpec) []string
}{
	{"hostProcess", func(s *corev1.PodSpec) []string { return ifAny(hostProcess(s)) }},
	{"hostNetwork", func(s *corev1.PodSpec) []string { return ifAny(s.HostNetwork) }},
	{"hostPID", func(s *corev1.PodSpec) []string { return ifAny(s.HostPID) }},
	{"hostIPC", func(s *corev1.PodSpec) []string { return ifAny(s.HostIPC) }},
	{"privileged", func(s *corev1.PodSpec) []string {
		return ifAny(containersWhere(s, func(c *corev1.Container) bool {
			return c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		}) != "")
	}},
	{"capability", func(s *corev1.PodSpec) []string {
		return fromContainers(s, func(c *corev1.Container) []string {
			if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
				return nil
			}
			var out []string
			for _, cp := range c.SecurityContext.Capabilities.Add {
				out = append(out, string(cp))
			}
			return out
		})
	}},
	{"hostPath", func(s *corev1.PodSpec) []string {
		var out []string
		for _, v := range s.Volumes {
			if v.HostPath != nil {
				out = append(out, v.HostPath.Path)
			}
		}
		return out
	}},
	{"hostPort", func(s *corev1.PodSpec) []string {
		return fromContainers(s, func(c *corev1.Container) []string {
			var out []string
			for _, p := range c.Ports {
				if p.HostPort != 0 {
					out = append(out, fmt.Sprint(p.HostPort))
				}
			}
			return out
		})
	}},
	{"appArmor", appArmor},
	{"seLinux", seLinux},
	{"procMount", func(s *corev1.PodSpec) []string {
		return fromContainers(s, func(c *corev1.Container) []string {
			if c.SecurityContext != nil && c.SecurityContext.ProcMount != nil && *c.SecurityContext.ProcMount != corev1.DefaultProcMount {
				return []string{string(*c.SecurityContext.ProcMount)}
			}
			return nil
		})
	}},
	{"seccomp", func(s *corev1.PodSpec) []string {
		unconfined := s.SecurityContext != nil && s.SecurityContext.SeccompProfile != nil && s.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined
		return append(ifAnyValue(unconfined, string(corev1.SeccompProfileTypeUnconfined)), fromContainers(s, func(c *corev1.Container) []string {
			if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil && c.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
				return []string{string(corev1.SeccompProfileTypeUnconfined)}
			}
			return nil
		})...)
	}},
	{"sysctl", func(s *corev1.PodSpec) []string {
		var out []string
		if s.SecurityContext != nil {
			for _, sc := range s.SecurityContext.Sysctls {
				out = append(out, sc.Name)
			}
		}
		return out
	}},
	{"probe host", probeHosts},
	{"runtimeClassName", func(s *corev1.PodSpec) []string {
		if s.RuntimeClassName != nil {
			return []string{*s.RuntimeClassName}
		}
		return nil
	}},
	{"hostAlias", func(s *corev1.PodSpec) []string {
		var out []string
		for _, h := range s.HostAliases {
			out = append(out, h.IP+" "+strings.Join(h.Hostnames, " "))
		}
		return out
	}},
	{"dns", func(s *corev1.PodSpec) []string {
		var out []string
		if s.DNSPolicy == corev1.DNSNone || s.DNSPolicy == corev1.DNSDefault {
			out = append(out, "policy "+string(s.DNSPolicy))
		}
		if c := s.DNSConfig; c != nil {
			for _, ns := range c.Nameservers {
				out = append(out, "nameserver "+ns)
			}
			for _, sr := range c.Searches {
				out = append(out, "search "+sr)
			}
			for _, o := range c.Options {
				out = append(out, "option "+o.Name)
			}
		}
		return out
	}},
}

// templatePrivileges lists one pod template's privileges.
func templatePrivileges(t *corev1.PodTemplateSpec, into map[string]bool) {
	for _, c := range privilegeControls {
		for _, v := range c.values(&t.Spec) {
			into[strings.TrimSpace(c.name+" "+v)] = true
		}
	}
	for k, v := range t.Annotations {
		// The annotation form of AppArmor, which Pod Security still reads.
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			into["appArmor "+v] = true
		}
	}
}

// servicePrivileges lists what a Service exposes beyond the cluster.
func servicePrivileges(obj map[string]any, into map[string]bool) {
	spec, _ := obj["spec"].(map[string]any)
	if t, _ := spec["type"].(string); t != "" && t != string(corev1.ServiceTypeClusterIP) {
		into["Service type "+t] = true
	}
	if ips, ok := spec["externalIPs"].([]any); ok {
		for _, ip := range ips {
			into[fmt.Sprint("Service externalIP ", ip)] = true
		}
	}
}

// headServicePrivileges lists what the head Service KubeRay creates from a
// RayCluster spec exposes: its serviceType, or the type and external IPs
// of a headService template.
func headServicePrivileges(h *rayv1.HeadGroupSpec) []string {
	into := map[string]bool{}
	if h.ServiceType != "" && h.ServiceType != corev1.ServiceTypeClusterIP {
		into["Service type "+string(h.ServiceType)] = true
	}
	if svc := h.HeadService; svc != nil {
		if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
			into["Service type "+string(svc.Spec.Type)] = true
		}
		for _, ip := range svc.Spec.ExternalIPs {
			into["Service externalIP "+ip] = true
		}
	}
	return tree.SortedKeys(into)
}

// templateControlValues is a control's values for the per-template
// security facts, joined for display.
func templateControlValues(name string) func(*corev1.PodTemplateSpec) string {
	for _, c := range privilegeControls {
		if c.name == name {
			return func(t *corev1.PodTemplateSpec) string { return joinSorted(c.values(&t.Spec)) }
		}
	}
	panic("review: no privilege control " + name) // a typo in securityFields, caught by every test
}

func hostProcess(s *corev1.PodSpec) bool {
	if s.SecurityContext != nil && s.SecurityContext.WindowsOptions != nil && s.SecurityContext.WindowsOptions.HostProcess != nil && *s.SecurityContext.WindowsOptions.HostProcess {
		return true
	}
	return len(fromContainers(s, func(c *corev1.Container) []string {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil && c.SecurityContext.WindowsOptions.HostProcess != nil && *c.SecurityContext.WindowsOptions.HostProcess {
			return []string{"true"}
		}
		return nil
	})) > 0
}

// appArmor lists every AppArmor profile other than the runtime's default
// and a named local one (Pod Security's baseline allows those two).
func appArmor(s *corev1.PodSpec) []string {
	relaxed := func(p *corev1.AppArmorProfile) []string {
		if p != nil && p.Type != corev1.AppArmorProfileTypeRuntimeDefault && p.Type != corev1.AppArmorProfileTypeLocalhost {
			return []string{string(p.Type)}
		}
		return nil
	}
	var out []string
	if s.SecurityContext != nil {
		out = relaxed(s.SecurityContext.AppArmorProfile)
	}
	return append(out, fromContainers(s, func(c *corev1.Container) []string {
		if c.SecurityContext == nil {
			return nil
		}
		return relaxed(c.SecurityContext.AppArmorProfile)
	})...)
}

// seLinux lists every SELinux option set: a type, user, role or level
// changes what the container's process may touch on the node.
func seLinux(s *corev1.PodSpec) []string {
	opts := func(o *corev1.SELinuxOptions) []string {
		if o == nil {
			return nil
		}
		var out []string
		for _, kv := range [][2]string{{"type", o.Type}, {"user", o.User}, {"role", o.Role}, {"level", o.Level}} {
			if kv[1] != "" {
				out = append(out, kv[0]+" "+kv[1])
			}
		}
		return out
	}
	var out []string
	if s.SecurityContext != nil {
		out = opts(s.SecurityContext.SELinuxOptions)
	}
	return append(out, fromContainers(s, func(c *corev1.Container) []string {
		if c.SecurityContext == nil {
			return nil
		}
		return opts(c.SecurityContext.SELinuxOptions)
	})...)
}

// probeHosts lists the hosts probes and lifecycle hooks call: another
// host than the pod's own is a request from the node's network.
func probeHosts(s *corev1.PodSpec) []string {
	var out []string
	handler := func(h *corev1.ProbeHandler) {
		if h == nil {
			return
		}
		if h.HTTPGet != nil && h.HTTPGet.Host != "" {
			out = append(out, h.HTTPGet.Host)
		}
		if h.TCPSocket != nil && h.TCPSocket.Host != "" {
			out = append(out, h.TCPSocket.Host)
		}
	}
	hook := func(h *corev1.LifecycleHandler) {
		if h == nil {
			return
		}
		if h.HTTPGet != nil && h.HTTPGet.Host != "" {
			out = append(out, h.HTTPGet.Host)
		}
		if h.TCPSocket != nil && h.TCPSocket.Host != "" {
			out = append(out, h.TCPSocket.Host)
		}
	}
	fromContainers(s, func(c *corev1.Container) []string {
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p != nil {
				handler(&p.ProbeHandler)
			}
		}
		if c.Lifecycle != nil {
			hook(c.Lifecycle.PostStart)
			hook(c.Lifecycle.PreStop)
		}
		return nil
	})
	return out
}

// fromContainers gathers f over init containers and containers (ephemeral
// containers are added by kubectl debug, never rendered).
func fromContainers(s *corev1.PodSpec, f func(*corev1.Container) []string) []string {
	var out []string
	for _, list := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			out = append(out, f(&list[i])...)
		}
	}
	return out
}

func ifAny(b bool) []string { return ifAnyValue(b, "") }

func ifAnyValue(b bool, v string) []string {
	if b {
		return []string{v}
	}
	return nil
}
