package review

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Security facts are what a one-line change can do to the cluster beyond
// cost: privilege, host access, identity, credentials, placement and
// scope. They are keyed as scheduling facts are (facts.go), so a reviewer
// reads `RayCluster/ns/x workers hostNetwork: (none) → true` by name.

// securityFacts records, per pod template (collapsed), every field the
// review must show when it changes.
func securityFacts(o owner, facts map[string]string) {
	for _, f := range securityFields {
		collapse(o, f.name, func(t podTemplate) string { return f.get(t.tmpl) }, facts)
	}
}

// securityField is one pod template fact the review compares: its name
// and how to read it ("" when unset).
type securityField struct {
	name string
	get  func(*corev1.PodTemplateSpec) string
}

// securityFields are the facts of a pod template that change what its
// pods may do or reach, in the order the review lists them.
var securityFields = []securityField{
	{"pod-security", func(t *corev1.PodTemplateSpec) string {
		return string(podsecurity.PodNeeds(&t.ObjectMeta, &t.Spec))
	}},
	{"privileged", func(t *corev1.PodTemplateSpec) string {
		return containersWhere(&t.Spec, func(c *corev1.Container) bool {
			return c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		})
	}},
	{"allowPrivilegeEscalation", func(t *corev1.PodTemplateSpec) string {
		return containersWhere(&t.Spec, func(c *corev1.Container) bool {
			return c.SecurityContext != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && *c.SecurityContext.AllowPrivilegeEscalation
		})
	}},
	{"capabilities", capabilities},
	{"hostNetwork", func(t *corev1.PodTemplateSpec) string { return flag(t.Spec.HostNetwork) }},
	{"hostPID", func(t *corev1.PodTemplateSpec) string { return flag(t.Spec.HostPID) }},
	{"hostIPC", func(t *corev1.PodTemplateSpec) string { return flag(t.Spec.HostIPC) }},
	{"hostUsers", func(t *corev1.PodTemplateSpec) string {
		if t.Spec.HostUsers != nil {
			return fmt.Sprint(*t.Spec.HostUsers)
		}
		return ""
	}},
	{"hostPorts", hostPorts},
	{"hostPath", func(t *corev1.PodTemplateSpec) string {
		var out []string
		for _, v := range t.Spec.Volumes {
			if v.HostPath != nil {
				out = append(out, v.HostPath.Path)
			}
		}
		return joinSorted(out)
	}},
	{"volume types", volumeTypes},
	{"runAsUser", func(t *corev1.PodTemplateSpec) string {
		return perContainer(t, func(p *corev1.PodSecurityContext) string {
			if p != nil && p.RunAsUser != nil {
				return fmt.Sprint(*p.RunAsUser)
			}
			return ""
		}, func(c *corev1.SecurityContext) string {
			if c != nil && c.RunAsUser != nil {
				return fmt.Sprint(*c.RunAsUser)
			}
			return ""
		})
	}},
	{"runAsNonRoot", func(t *corev1.PodTemplateSpec) string {
		return perContainer(t, func(p *corev1.PodSecurityContext) string {
			if p != nil && p.RunAsNonRoot != nil {
				return fmt.Sprint(*p.RunAsNonRoot)
			}
			return ""
		}, func(c *corev1.SecurityContext) string {
			if c != nil && c.RunAsNonRoot != nil {
				return fmt.Sprint(*c.RunAsNonRoot)
			}
			return ""
		})
	}},
	{"seccomp", func(t *corev1.PodTemplateSpec) string {
		return perContainer(t, func(p *corev1.PodSecurityContext) string {
			if p != nil && p.SeccompProfile != nil {
				return string(p.SeccompProfile.Type)
			}
			return ""
		}, func(c *corev1.SecurityContext) string {
			if c != nil && c.SeccompProfile != nil {
				return string(c.SeccompProfile.Type)
			}
			return ""
		})
	}},
	{"sysctls", templateControlValues("sysctl")},
	{"procMount", templateControlValues("procMount")},
	{"appArmor", templateControlValues("appArmor")},
	{"seLinux", templateControlValues("seLinux")},
	{"hostProcess", templateControlValues("hostProcess")},
	{"probe host", templateControlValues("probe host")},
	{"runtimeClassName", templateControlValues("runtimeClassName")},
	{"hostAliases", templateControlValues("hostAlias")},
	{"dns", templateControlValues("dns")},
	{"serviceAccount", func(t *corev1.PodTemplateSpec) string { return t.Spec.ServiceAccountName }},
	{"automountServiceAccountToken", func(t *corev1.PodTemplateSpec) string {
		if t.Spec.AutomountServiceAccountToken != nil {
			return fmt.Sprint(*t.Spec.AutomountServiceAccountToken)
		}
		return ""
	}},
	{"secrets", func(t *corev1.PodTemplateSpec) string { return joinSorted(references(&t.Spec, true)) }},
	{"configMaps", func(t *corev1.PodTemplateSpec) string { return joinSorted(references(&t.Spec, false)) }},
	{"tolerations", func(t *corev1.PodTemplateSpec) string {
		var out []string
		for _, tol := range t.Spec.Tolerations {
			s := string(tol.Operator)
			if s == "" {
				s = "Equal"
			}
			out = append(out, fmt.Sprintf("%s %s %s:%s", orAny(tol.Key), s, tol.Value, orAny(string(tol.Effect))))
		}
		return joinSorted(out)
	}},
	{"nodeSelector", func(t *corev1.PodTemplateSpec) string {
		var out []string
		for _, k := range tree.SortedKeys(t.Spec.NodeSelector) {
			out = append(out, k+"="+t.Spec.NodeSelector[k])
		}
		return strings.Join(out, ", ")
	}},
	{"nodeName", func(t *corev1.PodTemplateSpec) string { return t.Spec.NodeName }},
	{"affinity", func(t *corev1.PodTemplateSpec) string {
		if t.Spec.Affinity == nil {
			return ""
		}
		b, err := json.Marshal(t.Spec.Affinity)
		if err != nil {
			return "(unreadable)"
		}
		return string(b)
	}},
}

// scopeFacts records the object-level facts: a Service's type and the
// namespaces the run's objects live in.
func scopeFacts(kind, ref string, obj map[string]any, facts map[string]string) {
	if kind == "Service" {
		spec, _ := obj["spec"].(map[string]any)
		t, _ := spec["type"].(string)
		if t == "" {
			t = "ClusterIP" // the API server's default
		}
		facts[ref+" type"] = t
		if ips, ok := spec["externalIPs"].([]any); ok && len(ips) > 0 {
			facts[ref+" externalIPs"] = fmt.Sprint(ips...)
		}
	}
}

func containersWhere(spec *corev1.PodSpec, pred func(*corev1.Container) bool) string {
	var out []string
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if pred(&list[i]) {
				out = append(out, list[i].Name)
			}
		}
	}
	return joinSorted(out)
}

func capabilities(t *corev1.PodTemplateSpec) string {
	seen := map[string]bool{}
	for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && c.SecurityContext.Capabilities != nil {
				for _, cp := range c.SecurityContext.Capabilities.Add {
					seen["add "+string(cp)] = true
				}
			}
		}
	}
	return strings.Join(tree.SortedKeys(seen), ", ")
}

func hostPorts(t *corev1.PodTemplateSpec) string {
	var out []string
	for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for _, c := range list {
			for _, p := range c.Ports {
				if p.HostPort != 0 {
					out = append(out, fmt.Sprintf("%s:%d", c.Name, p.HostPort))
				}
			}
		}
	}
	return joinSorted(out)
}

// volumeTypes names each volume's source kind (emptyDir, hostPath,
// persistentVolumeClaim, secret, ...), as the JSON key says it.
func volumeTypes(t *corev1.PodTemplateSpec) string {
	seen := map[string]bool{}
	for _, v := range t.Spec.Volumes {
		b, err := json.Marshal(v.VolumeSource)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			for k := range m {
				seen[k] = true
			}
		}
	}
	return strings.Join(tree.SortedKeys(seen), ", ")
}

// perContainer prints the pod-level value and every container's own.
func perContainer(t *corev1.PodTemplateSpec, pod func(*corev1.PodSecurityContext) string, ctr func(*corev1.SecurityContext) string) string {
	var out []string
	if v := pod(t.Spec.SecurityContext); v != "" {
		out = append(out, "pod="+v)
	}
	for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for _, c := range list {
			if v := ctr(c.SecurityContext); v != "" {
				out = append(out, c.Name+"="+v)
			}
		}
	}
	return strings.Join(out, ", ")
}

// references lists the Secrets (secret true) or ConfigMaps the pod reads:
// env, envFrom, volumes (projected included) and image pull secrets.
func references(spec *corev1.PodSpec, secret bool) []string {
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" {
			seen[n] = true
		}
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				if secret && e.ValueFrom.SecretKeyRef != nil {
					add(e.ValueFrom.SecretKeyRef.Name)
				}
				if !secret && e.ValueFrom.ConfigMapKeyRef != nil {
					add(e.ValueFrom.ConfigMapKeyRef.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if secret && e.SecretRef != nil {
					add(e.SecretRef.Name)
				}
				if !secret && e.ConfigMapRef != nil {
					add(e.ConfigMapRef.Name)
				}
			}
		}
	}
	for _, v := range spec.Volumes {
		if secret && v.Secret != nil {
			add(v.Secret.SecretName)
		}
		if !secret && v.ConfigMap != nil {
			add(v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if secret && s.Secret != nil {
					add(s.Secret.Name)
				}
				if !secret && s.ConfigMap != nil {
					add(s.ConfigMap.Name)
				}
			}
		}
	}
	if secret {
		for _, r := range spec.ImagePullSecrets {
			add(r.Name)
		}
	}
	return tree.SortedKeys(seen)
}

func flag(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func joinSorted(xs []string) string {
	sort.Strings(xs)
	return strings.Join(xs, ", ")
}

// levelRank orders Pod Security levels, least privileged first.
func levelRank(l string) int {
	switch podsecurity.Level(l) {
	case podsecurity.Restricted:
		return 0
	case podsecurity.Baseline:
		return 1
	case podsecurity.Privileged:
		return 2
	}
	return -1
}

// LevelRises reports whether after needs a more privileged level than
// before ("" is no pods).
func LevelRises(before, after string) bool { return levelRank(after) > levelRank(before) }
