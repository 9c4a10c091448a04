// Package prereq lists what must exist in the cluster before a render is
// applied, read from the rendered objects themselves (so `nrl-k8s
// preflight -f RENDERED.yaml` can use it as `check` does): the
// ServiceAccounts, PersistentVolumeClaims, Secrets and ConfigMaps the pods
// reference, the claim templates and DeviceClasses DRA needs, the KAI queue,
// and the APIs (CRDs and API groups) the objects are written in. What the
// render creates itself is not a prerequisite. Pods are read as KubeRay
// v1.5.0 creates them (fn/analyse/workload).
package prereq

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Prerequisite is one object that must exist.
type Prerequisite struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Namespace is "" for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Optional is true when every reference may be missing (an optional
	// Secret or ConfigMap: the pod starts without it).
	Optional bool `json:"optional,omitempty"`
	// Why is the first reference, in words; ReferencedBy every reference
	// (object and field path).
	Why          string   `json:"why"`
	ReferencedBy []string `json:"referencedBy"`
}

// Key identifies the object (kind, namespace, name).
func (p Prerequisite) Key() string { return p.Kind + "/" + p.Namespace + "/" + p.Name }

// ComputeDomainChannelClass is the DeviceClass the NVIDIA DRA driver's
// ComputeDomain channel claims ask devices from.
const ComputeDomainChannelClass = "compute-domain-default-channel.nvidia.com"

// ExtendedResourceKind is the prerequisite kind of an extended resource a
// pod requests (nvidia.com/gpu, rdma/ib): a node must advertise it (a
// device plugin), or a DeviceClass must declare it as its
// extendedResourceName (DRA's extended resources, beta in Kubernetes 1.36),
// or every pod requesting it stays Pending.
const ExtendedResourceKind = "ExtendedResource"

// FromObjects computes the prerequisites of the rendered objects (see
// workload.Objects for what objs may hold), sorted by kind, namespace and
// name. An object that cannot be read is an error naming it.
func FromObjects(objs []any) ([]Prerequisite, error) {
	read, err := workload.Objects(objs)
	if err != nil {
		return nil, err
	}
	l := &list{byKey: map[string]*entry{}, rendered: map[string]bool{}}
	for _, o := range read {
		l.rendered[o.Kind+"/"+o.Namespace+"/"+o.Name] = true
	}
	for _, o := range read {
		l.api(o)
		if err := l.object(o); err != nil {
			return nil, err
		}
	}
	pods, errs := workload.Pods(read)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	for _, p := range pods {
		l.pod(p)
	}
	return l.sorted(), nil
}

type list struct {
	byKey    map[string]*entry
	rendered map[string]bool
}

// entry is a prerequisite being collected: every reference with its words
// and whether it is optional.
type entry struct {
	p    Prerequisite
	refs map[string]ref
}

type ref struct {
	why      string
	optional bool
}

// add records a reference.
func (l *list) add(kind, apiVersion, ns, name string, optional bool, at, why string) {
	if name == "" || l.rendered[kind+"/"+ns+"/"+name] {
		return
	}
	p := Prerequisite{Kind: kind, APIVersion: apiVersion, Namespace: ns, Name: name}
	e := l.byKey[p.Key()]
	if e == nil {
		e = &entry{p: p, refs: map[string]ref{}}
		l.byKey[p.Key()] = e
	}
	if r, ok := e.refs[at]; !ok || r.optional {
		e.refs[at] = ref{why: why, optional: optional}
	}
}

// sorted: optional only when every reference is; Why is the first required
// reference in order (the first optional one when none is required).
func (l *list) sorted() []Prerequisite {
	out := make([]Prerequisite, 0, len(l.byKey))
	for _, e := range l.byKey {
		p := e.p
		p.Optional = true
		for at, r := range e.refs {
			p.ReferencedBy = append(p.ReferencedBy, at)
			p.Optional = p.Optional && r.optional
		}
		sort.Strings(p.ReferencedBy)
		for _, at := range p.ReferencedBy {
			if r := e.refs[at]; p.Why == "" || !r.optional {
				p.Why = at + ": " + r.why
				if !r.optional {
					break
				}
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// alwaysServed are the API versions every supported cluster serves.
var alwaysServed = map[string]bool{"v1": true, "apps/v1": true, "batch/v1": true}

// plurals are the resource names of the kinds we render or reference (the
// rest follow Kubernetes' lowercase-plus-s convention).
var plurals = map[string]string{
	"RayJob": "rayjobs", "RayCluster": "rayclusters", "RayService": "rayservices",
	"ComputeDomain": "computedomains", "ResourceClaimTemplate": "resourceclaimtemplates",
	"Queue": "queues", "LocalQueue": "localqueues", "WorkloadPriorityClass": "workloadpriorityclasses",
}

// api: an object in a custom group needs its CRD serving that version; one
// in a built-in group beyond v1/apps/batch (resource.k8s.io/v1: Kubernetes
// 1.34 or later) needs the API server to serve that group version, which
// it registers as an APIService.
func (l *list) api(o workload.Object) {
	l.apiOf(o.APIVersion, o.Kind, o.Ref())
}

func (l *list) apiOf(apiVersion, kind, ref string) {
	if alwaysServed[apiVersion] || !strings.Contains(apiVersion, "/") {
		return
	}
	group, version, _ := strings.Cut(apiVersion, "/")
	plural := plurals[kind]
	if plural == "" {
		plural = strings.ToLower(kind) + "s"
	}
	if group == "k8s.io" || strings.HasSuffix(group, ".k8s.io") {
		l.add("APIService", "apiregistration.k8s.io/v1", "", version+"."+group, false, ref,
			fmt.Sprintf("uses %s %s: the API server must serve %s", apiVersion, kind, apiVersion))
		return
	}
	l.add("CustomResourceDefinition", "apiextensions.k8s.io/v1", "", plural+"."+group, false, ref,
		fmt.Sprintf("uses %s %s: the CRD must be installed and serve version %s", apiVersion, kind, version))
}

// object reads what a non-pod object references.
func (l *list) object(o workload.Object) error {
	switch o.Kind {
	case "ResourceClaimTemplate":
		var t resourcev1.ResourceClaimTemplate
		if err := workload.Decode(o, &t); err != nil {
			return err
		}
		for i, r := range t.Spec.Spec.Devices.Requests {
			at := fmt.Sprintf("%s spec.spec.devices.requests[%d]", o.Ref(), i)
			if r.Exactly != nil {
				l.add("DeviceClass", vocab.DRAAPIVersion, "", r.Exactly.DeviceClassName, false, at+".exactly.deviceClassName",
					"the DRA driver's DeviceClass the claim asks devices from")
			}
			for j, s := range r.FirstAvailable {
				l.add("DeviceClass", vocab.DRAAPIVersion, "", s.DeviceClassName, false, fmt.Sprintf("%s.firstAvailable[%d].deviceClassName", at, j),
					"the DRA driver's DeviceClass the claim asks devices from")
			}
		}
	}
	data, err := o.Map()
	if err != nil {
		return fmt.Errorf("%s: %w", o.Ref(), err)
	}
	if o.Kind == "ComputeDomain" {
		// The NVIDIA DRA driver creates the ComputeDomain's channel claim
		// template itself: pods may name it without our rendering it.
		spec, _ := data["spec"].(map[string]any)
		ch, _ := spec["channel"].(map[string]any)
		rct, _ := ch["resourceClaimTemplate"].(map[string]any)
		if name, _ := rct["name"].(string); name != "" {
			l.rendered["ResourceClaimTemplate/"+o.Namespace+"/"+name] = true
		}
		// ... whose request names the driver's channel DeviceClass
		// (NVIDIA dra-driver-gpu: templates/compute-domain-channel-claim-
		// template.tmpl.yaml, the class its Helm chart installs).
		l.add("DeviceClass", vocab.DRAAPIVersion, "", ComputeDomainChannelClass, false, o.Ref()+" spec.channel",
			"the NVIDIA DRA driver's channel claim template asks devices from it; without it no pod of the ComputeDomain is scheduled")
	}
	if md, ok := data["metadata"].(map[string]any); ok {
		labels, _ := md["labels"].(map[string]any)
		if q, _ := labels[vocab.KAIQueueLabel].(string); q != "" {
			l.queue(q, o.Ref()+" metadata.labels["+vocab.KAIQueueLabel+"]")
		}
		if q, _ := labels[vocab.KueueQueueLabel].(string); q != "" {
			ref := o.Ref() + " metadata.labels[" + vocab.KueueQueueLabel + "]"
			l.add("LocalQueue", vocab.KueueAPIVersion, o.Namespace, q, false, ref,
				"the Kueue LocalQueue that admits the object; Kueue's webhook refuses, or leaves suspended, an object naming a missing one (nrl-k8s preflight also checks its ClusterQueue and quota)")
			l.apiOf(vocab.KueueAPIVersion, "LocalQueue", ref)
		}
		if pc, _ := labels[vocab.KueuePriorityClassLabel].(string); pc != "" {
			ref := o.Ref() + " metadata.labels[" + vocab.KueuePriorityClassLabel + "]"
			l.add("WorkloadPriorityClass", vocab.KueueAPIVersion, "", pc, false, ref, "the priority Kueue gives the object's Workload")
			l.apiOf(vocab.KueueAPIVersion, "WorkloadPriorityClass", ref)
		}
	}
	return nil
}

func (l *list) queue(name, ref string) {
	l.add("Queue", vocab.KAIQueueAPIVersion, "", name, false, ref, "the KAI scheduler queue the pods are submitted to")
	l.apiOf(vocab.KAIQueueAPIVersion, "Queue", ref)
}

// pod reads what one pod references.
func (l *list) pod(p workload.Pod) {
	ns, sp := p.Namespace, p.SpecPath()
	at := func(field string) string { return p.Object + " " + sp + "." + field }
	if q := p.Meta.Labels[vocab.KAIQueueLabel]; q != "" {
		mp := "metadata"
		if p.Path != "" {
			mp = p.Path + ".metadata"
		}
		l.queue(q, p.Object+" "+mp+".labels["+vocab.KAIQueueLabel+"]")
	}
	// The namespace's "default" ServiceAccount is created by Kubernetes.
	if sa := p.Spec.ServiceAccountName; sa != "" && sa != "default" {
		l.add("ServiceAccount", "v1", ns, sa, false, at("serviceAccountName"),
			"the pod runs as it; with ServiceAccount admission (every real cluster) a pod naming a missing one is refused")
	}
	for i, s := range p.Spec.ImagePullSecrets {
		l.add("Secret", "v1", ns, s.Name, false, at(fmt.Sprintf("imagePullSecrets[%d]", i)), "pulls the pod's images")
	}
	if pc := p.Spec.PriorityClassName; pc != "" && pc != "system-cluster-critical" && pc != "system-node-critical" {
		l.add("PriorityClass", "scheduling.k8s.io/v1", "", pc, false, at("priorityClassName"), "the pod's priority; a missing one refuses the pod")
	}
	if rc := p.Spec.RuntimeClassName; rc != nil && *rc != "" {
		l.add("RuntimeClass", "node.k8s.io/v1", "", *rc, false, at("runtimeClassName"), "the pod's container runtime; a missing one refuses the pod")
	}
	for i, c := range p.Spec.ResourceClaims {
		f := fmt.Sprintf("resourceClaims[%d]", i)
		if c.ResourceClaimTemplateName != nil {
			l.add("ResourceClaimTemplate", vocab.DRAAPIVersion, ns, *c.ResourceClaimTemplateName, false, at(f+".resourceClaimTemplateName"),
				"each pod's claim is made from it; the render does not create it")
		}
		if c.ResourceClaimName != nil {
			l.add("ResourceClaim", vocab.DRAAPIVersion, ns, *c.ResourceClaimName, false, at(f+".resourceClaimName"),
				"the pod shares this existing claim")
		}
	}
	for i, v := range p.Spec.Volumes {
		f := fmt.Sprintf("volumes[%d]", i)
		switch {
		case v.PersistentVolumeClaim != nil:
			l.add("PersistentVolumeClaim", "v1", ns, v.PersistentVolumeClaim.ClaimName, false, at(f+".persistentVolumeClaim.claimName"),
				"mounted by the pod; a missing claim keeps the pod Pending")
		case v.Secret != nil:
			l.add("Secret", "v1", ns, v.Secret.SecretName, opt(v.Secret.Optional), at(f+".secret.secretName"), "mounted by the pod")
		case v.ConfigMap != nil:
			l.add("ConfigMap", "v1", ns, v.ConfigMap.Name, opt(v.ConfigMap.Optional), at(f+".configMap.name"), "mounted by the pod")
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				pf := fmt.Sprintf("%s.projected.sources[%d]", f, j)
				if s.Secret != nil {
					l.add("Secret", "v1", ns, s.Secret.Name, opt(s.Secret.Optional), at(pf+".secret.name"), "mounted by the pod")
				}
				if s.ConfigMap != nil {
					l.add("ConfigMap", "v1", ns, s.ConfigMap.Name, opt(s.ConfigMap.Optional), at(pf+".configMap.name"), "mounted by the pod")
				}
			}
		}
	}
	visit(p, func(cp string, c *corev1.Container) {
		for _, name := range extendedResources(c) {
			l.add(ExtendedResourceKind, "v1", "", name, false, p.Object+" "+cp+".resources",
				"the pod requests it: a node's device plugin must advertise it, or a DeviceClass must declare extendedResourceName: "+name)
		}
		for i, e := range c.EnvFrom {
			f := fmt.Sprintf("%s.envFrom[%d]", cp, i)
			if e.SecretRef != nil {
				l.add("Secret", "v1", ns, e.SecretRef.Name, opt(e.SecretRef.Optional), p.Object+" "+f+".secretRef.name", "environment of the container")
			}
			if e.ConfigMapRef != nil {
				l.add("ConfigMap", "v1", ns, e.ConfigMapRef.Name, opt(e.ConfigMapRef.Optional), p.Object+" "+f+".configMapRef.name", "environment of the container")
			}
		}
		for i, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			f := fmt.Sprintf("%s.env[%d].valueFrom", cp, i)
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				l.add("Secret", "v1", ns, r.Name, opt(r.Optional), p.Object+" "+f+".secretKeyRef", "environment variable "+e.Name+" (key "+r.Key+")")
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				l.add("ConfigMap", "v1", ns, r.Name, opt(r.Optional), p.Object+" "+f+".configMapKeyRef", "environment variable "+e.Name+" (key "+r.Key+")")
			}
		}
	})
}

// visit calls f with every container and the path of the field its
// settings come from: a container KubeRay adds is reported at the field it
// copies (wait-gcs-ready: the Ray container's env; autoscaler:
// autoscalerOptions.env), so the same reference is not listed twice.
func visit(p workload.Pod, f func(path string, c *corev1.Container)) {
	for _, set := range []struct {
		name string
		list []corev1.Container
	}{{"initContainers", p.Spec.InitContainers}, {"containers", p.Spec.Containers}} {
		for i := range set.list {
			path := fmt.Sprintf("%s.%s[%d]", p.SpecPath(), set.name, i)
			if in, injected := p.InjectedAt(set.name, i); injected {
				path = in.From
			}
			f(path, &set.list[i])
		}
	}
}

func opt(b *bool) bool { return b != nil && *b }

// extendedResources are the extended resources a container requests or
// limits (a domain-prefixed name outside kubernetes.io, not hugepages).
func extendedResources(c *corev1.Container) []string {
	seen := map[string]bool{}
	for _, list := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
		for name := range list {
			n := string(name)
			if strings.Contains(n, "/") && !strings.HasPrefix(n, corev1.ResourceDefaultNamespacePrefix) && !strings.Contains(strings.SplitN(n, "/", 2)[0], "kubernetes.io") {
				seen[n] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
