package review

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// tmpl is a pod template of scope (and group, for a worker) with the
// given annotations, pod fields set by edit.
func tmpl(scope, group string, annotations map[string]string, edit func(*corev1.PodSpec)) podTemplate {
	t := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	if edit != nil {
		edit(&t.Spec)
	}
	return podTemplate{scope: scope, group: group, pods: 1, tmpl: t}
}

// A fact is keyed at the coarsest level where it holds: the object when
// every template agrees, the head and "workers" when only the workers
// agree, each group otherwise; an empty value sets nothing.
func TestCollapse(t *testing.T) {
	topo := func(v string) map[string]string {
		if v == "" {
			return nil
		}
		return map[string]string{"kai.scheduler/topology": v}
	}
	cases := []struct {
		name      string
		templates []podTemplate
		want      map[string]string
	}{
		{"every template agrees", []podTemplate{tmpl("head", "", topo("t"), nil), tmpl("worker", "a", topo("t"), nil), tmpl("worker", "b", topo("t"), nil)},
			map[string]string{"RayCluster/x topology": "t"}},
		{"the head differs", []podTemplate{tmpl("head", "", topo("h"), nil), tmpl("worker", "a", topo("t"), nil), tmpl("worker", "b", topo("t"), nil)},
			map[string]string{"RayCluster/x head topology": "h", "RayCluster/x workers topology": "t"}},
		{"the groups differ", []podTemplate{tmpl("head", "", topo("h"), nil), tmpl("worker", "a", topo("t"), nil), tmpl("worker", "b", topo("u"), nil)},
			map[string]string{"RayCluster/x head topology": "h", "RayCluster/x group a topology": "t", "RayCluster/x group b topology": "u"}},
		{"empty values set nothing", []podTemplate{tmpl("head", "", nil, nil), tmpl("worker", "a", topo("t"), nil)},
			map[string]string{"RayCluster/x workers topology": "t"}},
		{"no template", nil, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			facts := map[string]string{}
			collapse(owner{ref: "RayCluster/x", templates: c.templates}, "topology", func(p podTemplate) string { return p.tmpl.Annotations["kai.scheduler/topology"] }, facts)
			assert.Equal(t, c.want, facts)
		})
	}
}

// Scheduling facts: per template the scheduler, KAI queue (the object's
// label before the pod's), topology and priority class; per object the
// run-wide topology and Kueue's labels.
func TestSchedulingFacts(t *testing.T) {
	sched := func(s *corev1.PodSpec) { s.SchedulerName, s.PriorityClassName = "kai-scheduler", "high" }
	withQueue := func(p podTemplate, q string) podTemplate {
		p.tmpl.Labels = map[string]string{"kai.scheduler/queue": q}
		return p
	}
	cases := []struct {
		name string
		o    owner
		want map[string]string
	}{
		{"the pods' queue and fields", owner{ref: "RayJob/j", templates: []podTemplate{withQueue(tmpl("head", "", nil, sched), "team"),
			withQueue(tmpl("worker", "g", map[string]string{"kai.scheduler/topology": "t", "kai.scheduler/topology-required-placement": "rack"}, sched), "team")}},
			map[string]string{"RayJob/j scheduler": "kai-scheduler", "RayJob/j queue": "team", "RayJob/j priority-class": "high",
				"RayJob/j workers topology": "t", "RayJob/j workers required-placement": "rack"}},
		{"the object's queue wins", owner{ref: "RayJob/j", labels: map[string]string{"kai.scheduler/queue": "top"}, templates: []podTemplate{withQueue(tmpl("head", "", nil, nil), "pod")}},
			map[string]string{"RayJob/j queue": "top"}},
		{"run-wide and Kueue facts", owner{ref: "RayJob/j",
			labels:      map[string]string{"kueue.x-k8s.io/queue-name": "lab", "kueue.x-k8s.io/priority-class": "p"},
			annotations: map[string]string{"kai.scheduler/topology": "t", "kai.scheduler/topology-preferred-placement": "block"}},
			map[string]string{"RayJob/j kueue queue": "lab", "RayJob/j kueue priority-class": "p", "RayJob/j run-wide topology": "t", "RayJob/j run-wide preferred-placement": "block"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			facts := map[string]string{}
			schedulingFacts(c.o, facts)
			assert.Equal(t, c.want, facts)
		})
	}
}

// A pod's claim names its template, its ResourceClaim, or "(unresolved)".
func TestClaimFacts(t *testing.T) {
	name := func(s string) *string { return &s }
	claims := func(cs ...corev1.PodResourceClaim) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.ResourceClaims = cs }
	}
	o := owner{ref: "RayCluster/x", templates: []podTemplate{
		tmpl("head", "", nil, nil),
		tmpl("worker", "a", nil, claims(corev1.PodResourceClaim{Name: "roce", ResourceClaimTemplateName: name("roce-a")}, corev1.PodResourceClaim{Name: "odd"})),
		tmpl("worker", "b", nil, claims(corev1.PodResourceClaim{Name: "roce", ResourceClaimName: name("shared")})),
	}}
	facts := map[string]string{}
	claimFacts(o, facts)
	assert.Equal(t, map[string]string{"RayCluster/x group a claim roce": "roce-a", "RayCluster/x group b claim roce": "ResourceClaim/shared",
		"RayCluster/x group a claim odd": "(unresolved)"}, facts)
}

// DRA objects' sizes are read as plain data, each request as "count ×
// class" (all for mode All, alternatives joined), v1 and v1beta1 shapes;
// a shape not known records nothing.
func TestDRAObjectFacts(t *testing.T) {
	cases := []struct {
		name, kind, yaml string
		want             map[string]string
	}{
		{"a ComputeDomain", "ComputeDomain", "spec: {numNodes: 16, channel: {resourceClaimTemplate: {name: ch}}}",
			map[string]string{"o numNodes": "16", "o channel template": "ch"}},
		{"v1 requests", "ResourceClaimTemplate", `spec: {spec: {devices: {requests: [
  {name: roce, exactly: {deviceClassName: roce, count: 8}},
  {name: one, exactly: {deviceClassName: ib}},
  {name: every, exactly: {deviceClassName: gpu, allocationMode: All}},
  {name: alt, firstAvailable: [{name: a, deviceClassName: x, count: 2}, {name: b, deviceClassName: w}]},
  {exactly: {deviceClassName: z, count: "4"}}]}}}`,
			map[string]string{"o request roce": "8 × roce", "o request one": "1 × ib", "o request every": "all × gpu", "o request alt": "2 × x | 1 × w", "o request 4": "4 × z"}},
		{"v1beta1 requests", "ResourceClaimTemplate", "spec: {spec: {devices: {requests: [{name: r, deviceClassName: roce, count: 2}]}}}",
			map[string]string{"o request r": "2 × roce"}},
		{"an unknown shape", "ResourceClaimTemplate", "spec: {spec: {devices: {requests: [7, [x]]}}}", map[string]string{}},
		{"no spec", "ComputeDomain", "{}", map[string]string{}},
		{"another kind", "ConfigMap", "spec: {numNodes: 1}", map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var obj map[string]any
			assert.NoError(t, yaml.Unmarshal([]byte(c.yaml), &obj))
			facts := map[string]string{}
			draObjectFacts(c.kind, "o", obj, facts)
			assert.Equal(t, c.want, facts)
		})
	}
}

// Every image, in containers, init and ephemeral containers, anywhere in
// an object of any kind; GPUs per pod are the limit, else the request.
func TestCollectImagesAndGPUs(t *testing.T) {
	var obj map[string]any
	assert.NoError(t, yaml.Unmarshal([]byte(`kind: Unknown
spec:
  nested: [{template: {spec: {containers: [{image: a}, {image: ""}], initContainers: [{image: b}], ephemeralContainers: [{image: c}]}}}]
  containers: not-a-list
  other: {containers: [{name: no-image}]}
`), &obj))
	images := map[string]bool{}
	collectImages(obj, images)
	assert.Equal(t, map[string]bool{"a": true, "b": true, "c": true}, images)

	gpu := corev1.ResourceName("nvidia.com/gpu")
	for _, c := range []struct {
		init, want int64
	}{{2, 6}, {8, 8}} { // an init container adds nothing, but counts when it asks for more (kube-scheduler's effective request)
		spec := &corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpu: resource.MustParse("4")}, Requests: corev1.ResourceList{gpu: resource.MustParse("4")}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{gpu: *resource.NewQuantity(2, resource.DecimalSI)}}},
		}, InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpu: *resource.NewQuantity(c.init, resource.DecimalSI)}}}}}
		o := owner{ref: "RayCluster/x", templates: []podTemplate{{scope: "worker", group: "g", pods: 2, maxPods: 4, tmpl: &corev1.PodTemplateSpec{Spec: *spec}}}}
		assert.Equal(t, []PodGroup{{Owner: "RayCluster/x", Group: "g", Pods: 2, MaxPods: 4, GPUsPerPod: c.want}}, podGroups(o), "init %d", c.init)
	}
}
