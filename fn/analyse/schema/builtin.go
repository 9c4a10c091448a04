package schema

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/strictjson"
)

// checkBuiltin decodes a built-in kind strictly into its k8s.io/api type
// (an unknown or mistyped field fails) and checks the fields the API
// server requires, which the Go types cannot express.
func checkBuiltin(apiVersion, kind string, data map[string]any) ([]Violation, bool) {
	var vs []Violation
	add := func(p, format string, args ...any) {
		vs = append(vs, Violation{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	b, err := json.Marshal(data)
	if err != nil {
		return []Violation{{Msg: err.Error()}}, true
	}
	decode := func(target any) bool {
		strict, err := strictjson.Unmarshal(b, data, target)
		if err != nil {
			add("", "does not decode as %s %s: %v", apiVersion, kind, err)
			return false
		}
		for _, e := range strict {
			add("", "%v", e)
		}
		return true
	}
	meta := func(m metav1.ObjectMeta) {
		if m.Name == "" {
			add("metadata.name", "is required")
		}
	}
	switch apiVersion + "/" + kind {
	case "apps/v1/Deployment":
		var o appsv1.Deployment
		if !decode(&o) {
			return vs, true
		}
		meta(o.ObjectMeta)
		if o.Spec.Selector == nil {
			add("spec.selector", "is required")
		} else if sel, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err != nil {
			add("spec.selector", "%v", err)
		} else if sel.Empty() || !sel.Matches(labels.Set(o.Spec.Template.Labels)) {
			add("spec.template.metadata.labels", "do not match spec.selector; the API server rejects a Deployment whose template its selector does not select")
		}
		podSpec(&o.Spec.Template.Spec, "spec.template.spec", add)
	case "v1/Service":
		var o corev1.Service
		if !decode(&o) {
			return vs, true
		}
		meta(o.ObjectMeta)
		if len(o.Spec.Ports) == 0 && o.Spec.Type != corev1.ServiceTypeExternalName && o.Spec.ClusterIP != corev1.ClusterIPNone {
			add("spec.ports", "is required (at least one port)")
		}
		for i, p := range o.Spec.Ports {
			if p.Port <= 0 || p.Port > 65535 {
				add(fmt.Sprintf("spec.ports[%d].port", i), "found %d; expected 1-65535", p.Port)
			}
			if len(o.Spec.Ports) > 1 && p.Name == "" {
				add(fmt.Sprintf("spec.ports[%d].name", i), "is required when a Service has more than one port")
			}
		}
	case "v1/Pod":
		var o corev1.Pod
		if !decode(&o) {
			return vs, true
		}
		meta(o.ObjectMeta)
		podSpec(&o.Spec, "spec", add)
	case "v1/ConfigMap":
		var o corev1.ConfigMap
		if !decode(&o) {
			return vs, true
		}
		meta(o.ObjectMeta)
		for k := range o.Data {
			for _, e := range validation.IsConfigMapKey(k) {
				add("data."+k, "%s", e)
			}
		}
	case vocab.DRAAPIVersion + "/ResourceClaimTemplate":
		var o resourcev1.ResourceClaimTemplate
		if !decode(&o) {
			return vs, true
		}
		meta(o.ObjectMeta)
		for i, r := range o.Spec.Spec.Devices.Requests {
			p := fmt.Sprintf("spec.spec.devices.requests[%d]", i)
			if r.Name == "" {
				add(p+".name", "is required")
			}
			if (r.Exactly == nil) == (len(r.FirstAvailable) == 0) {
				add(p, "expected exactly one of exactly and firstAvailable")
			}
			if r.Exactly != nil && r.Exactly.DeviceClassName == "" {
				add(p+".exactly.deviceClassName", "is required")
			}
		}
	default:
		return nil, false
	}
	return vs, true
}

func podSpec(s *corev1.PodSpec, p string, add func(string, string, ...any)) {
	if len(s.Containers) == 0 {
		add(p+".containers", "is required (at least one container)")
	}
	for i, c := range s.Containers {
		cp := fmt.Sprintf("%s.containers[%d]", p, i)
		if c.Name == "" {
			add(cp+".name", "is required")
		}
		if c.Image == "" {
			add(cp+".image", "is required")
		}
	}
}
