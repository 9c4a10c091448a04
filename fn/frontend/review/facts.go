package review

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Fact keys name where a value sits, at the coarsest level where it holds:
//
//	RayCluster/x queue                  every pod template of the object agrees
//	RayCluster/x head topology          the head differs from the workers
//	RayCluster/x workers topology       every worker group agrees
//	RayCluster/x group g1 topology      worker groups differ
//
// Collapsing keeps the summary short and stable: splitting 64 workers into
// four `segment` groups instead of three changes no scheduling or DRA fact,
// only the node count, which is what the reviewer should see.

// podGroups lists the owner's pods with their GPU requests.
func podGroups(o owner) []PodGroup {
	var out []PodGroup
	for _, t := range o.templates {
		out = append(out, PodGroup{Owner: o.ref, Group: t.group, Pods: t.pods, MaxPods: t.maxPods, GPUsPerPod: gpusPerPod(&t.tmpl.Spec)})
	}
	return out
}

// gpusPerPod is the nvidia.com/gpu the scheduler reserves for the pod,
// counted as capacity.GPUsPerPod counts it (an init container that asks for
// more than the rest counts, as the scheduler's effective request does).
func gpusPerPod(spec *corev1.PodSpec) int64 {
	n, _ := capacity.GPUsPerPod(spec)
	return n
}

// collectImages gathers the image of every container, init container and
// ephemeral container anywhere in obj, whatever its kind, so an image in an
// object this package does not model still shows up.
func collectImages(v any, into map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "containers" || k == "initContainers" || k == "ephemeralContainers" {
				if list, ok := child.([]any); ok {
					for _, c := range list {
						if cm, ok := c.(map[string]any); ok {
							if img, ok := cm["image"].(string); ok && img != "" {
								into[img] = true
							}
						}
					}
				}
			}
			collectImages(child, into)
		}
	case []any:
		for _, e := range t {
			collectImages(e, into)
		}
	}
}

// schedulingFacts records what decides who waits and who is preempted:
// per pod template the scheduler, the KAI queue (the owning object's label,
// else the pod's: KAI's pod grouper reads the top owner first), the
// topology and its placement annotations, the priority class; per object
// the run-wide topology annotations (the PodGroup's own constraint, which
// binds every pod of the gang) and Kueue's LocalQueue and priority class.
func schedulingFacts(o owner, facts map[string]string) {
	fields := []struct {
		name string
		get  func(*corev1.PodTemplateSpec) string
	}{
		{"scheduler", func(t *corev1.PodTemplateSpec) string { return t.Spec.SchedulerName }},
		{"queue", func(t *corev1.PodTemplateSpec) string {
			if q, ok := o.labels[vocab.KAIQueueLabel]; ok {
				return q
			}
			return t.Labels[vocab.KAIQueueLabel]
		}},
		{"topology", func(t *corev1.PodTemplateSpec) string { return t.Annotations[vocab.KAITopologyAnnotation] }},
		{"required-placement", func(t *corev1.PodTemplateSpec) string { return t.Annotations[vocab.KAIRequiredPlacementAnnotation] }},
		{"preferred-placement", func(t *corev1.PodTemplateSpec) string { return t.Annotations[vocab.KAIPreferredPlacementAnnotation] }},
		{"priority-class", func(t *corev1.PodTemplateSpec) string { return t.Spec.PriorityClassName }},
	}
	for _, f := range fields {
		collapse(o, f.name, func(t podTemplate) string { return f.get(t.tmpl) }, facts)
	}
	for _, f := range []struct{ name, value string }{
		{"run-wide topology", o.annotations[vocab.KAITopologyAnnotation]},
		{"run-wide required-placement", o.annotations[vocab.KAIRequiredPlacementAnnotation]},
		{"run-wide preferred-placement", o.annotations[vocab.KAIPreferredPlacementAnnotation]},
		{"kueue queue", o.labels[vocab.KueueQueueLabel]},
		{"kueue priority-class", o.labels[vocab.KueuePriorityClassLabel]},
	} {
		if f.value != "" {
			facts[o.ref+" "+f.name] = f.value
		}
	}
}

// claimFacts records which DRA object each pod resource claim points at.
func claimFacts(o owner, facts map[string]string) {
	names := map[string]bool{}
	for _, t := range o.templates {
		for _, rc := range t.tmpl.Spec.ResourceClaims {
			names[rc.Name] = true
		}
	}
	for _, n := range tree.SortedKeys(names) {
		collapse(o, "claim "+n, func(t podTemplate) string {
			for _, rc := range t.tmpl.Spec.ResourceClaims {
				if rc.Name != n {
					continue
				}
				switch {
				case rc.ResourceClaimTemplateName != nil:
					return *rc.ResourceClaimTemplateName
				case rc.ResourceClaimName != nil:
					return "ResourceClaim/" + *rc.ResourceClaimName
				}
				return "(unresolved)"
			}
			return ""
		}, facts)
	}
}

// collapse sets field's value at the coarsest level that holds (see the
// comment at the top of the file); empty values set nothing.
func collapse(o owner, field string, value func(podTemplate) string, facts map[string]string) {
	set := func(scope, v string) {
		if v == "" {
			return
		}
		key := o.ref + " " + field
		if scope != "" {
			key = o.ref + " " + scope + " " + field
		}
		facts[key] = v
	}
	var all, workers []string
	for _, t := range o.templates {
		v := value(t)
		all = append(all, v)
		if t.scope == "worker" {
			workers = append(workers, v)
		}
	}
	if allEqual(all) {
		if len(all) > 0 {
			set("", all[0])
		}
		return
	}
	for _, t := range o.templates {
		if t.scope != "worker" {
			set(t.scope, value(t))
		}
	}
	if allEqual(workers) {
		if len(workers) > 0 {
			set("workers", workers[0])
		}
		return
	}
	for _, t := range o.templates {
		if t.scope == "worker" {
			set("group "+t.group, value(t))
		}
	}
}

func allEqual(vs []string) bool {
	for _, v := range vs {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// draObjectFacts records the DRA objects' sizes: a ComputeDomain's numNodes
// and channel template, a ResourceClaimTemplate's device requests. They are
// read as plain data because ComputeDomain has no Go type in our graph and
// resource.k8s.io moved the request fields between versions (v1beta1 has
// them on the request, v1 under `exactly`); a shape we do not know records
// nothing rather than failing the review.
func draObjectFacts(kind, ref string, obj map[string]any, facts map[string]string) {
	switch kind {
	case "ComputeDomain":
		spec, _ := obj["spec"].(map[string]any)
		if v, ok := spec["numNodes"]; ok {
			facts[ref+" numNodes"] = scalar(v)
		}
		if ch, ok := spec["channel"].(map[string]any); ok {
			if rct, ok := ch["resourceClaimTemplate"].(map[string]any); ok {
				if n, ok := rct["name"].(string); ok {
					facts[ref+" channel template"] = n
				}
			}
		}
	case "ResourceClaimTemplate":
		spec, _ := obj["spec"].(map[string]any)
		inner, _ := spec["spec"].(map[string]any)
		devices, _ := inner["devices"].(map[string]any)
		reqs, _ := devices["requests"].([]any)
		for i, r := range reqs {
			rm, ok := r.(map[string]any)
			if !ok {
				continue
			}
			name, _ := rm["name"].(string)
			if name == "" {
				name = strconv.Itoa(i)
			}
			facts[ref+" request "+name] = deviceRequest(rm)
		}
	}
}

// deviceRequest renders one request as "8 × roce.networking.k8s.aws" (or
// "all ×" for allocationMode All; alternatives of firstAvailable joined by
// " | ").
func deviceRequest(rm map[string]any) string {
	if ex, ok := rm["exactly"].(map[string]any); ok {
		rm = ex
	} else if alts, ok := rm["firstAvailable"].([]any); ok {
		var parts []string
		for _, a := range alts {
			if am, ok := a.(map[string]any); ok {
				parts = append(parts, deviceRequest(am))
			}
		}
		return strings.Join(parts, " | ")
	}
	class, _ := rm["deviceClassName"].(string)
	count := "1" // the API default for ExactCount
	if mode, _ := rm["allocationMode"].(string); mode == "All" {
		count = "all"
	} else if c, ok := rm["count"]; ok {
		count = scalar(c)
	}
	return count + " × " + class
}

// scalar prints a decoded YAML scalar; JSON numbers arrive as float64.
func scalar(v any) string {
	switch t := v.(type) {
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return "(non-scalar)"
}
