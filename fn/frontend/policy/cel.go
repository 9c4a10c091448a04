package policy

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// kueueMarks prefixes the labels and annotations Kueue writes into the pod
// templates of what it admits (pod-set labels, the Workload annotation). A
// forced re-apply of the unchanged render takes an atomic worker group
// list back without them (docs/gitops.md, "What Argo CD must not fight"):
// that is no edit, so the template comparison leaves them out.
const kueueMarks = vocab.KueueGroup + "/"

// validations are the refusals, each a field diff between the old and the
// new object (true: the update passes), with the message naming the field
// and the way to change a started run.
func validations() []admissionv1.Validation {
	counts := review.LiveRayClusterFields
	groupSkip := append([]string{"scaleStrategy", "template"}, counts...)
	workers := "size(variables.oldWorkers) == size(variables.newWorkers) && variables.newWorkers.all(g, variables.oldWorkers.exists(h, " +
		"h.groupName == g.groupName && " + sameExcept("g", "h", groupSkip) + " && " + sameTemplate("g.template", "h.template") + "))"
	var countCmp []string
	for _, f := range counts {
		countCmp = append(countCmp, "g.?"+f+" == h.?"+f)
	}
	head := sameExcept("variables.newHead", "variables.oldHead", []string{"template"}) + " && " +
		sameTemplate("variables.newHead.?template", "variables.oldHead.?template")
	return []admissionv1.Validation{
		{
			Expression: "!variables.rayJob || object.spec.?entrypoint.orValue('') == oldObject.spec.?entrypoint.orValue('')",
			Message:    "spec.entrypoint of a started run: KubeRay submits a RayJob's entrypoint once and never runs a changed one; " + Way,
		},
		{
			Expression: "!variables.rayJob || " + sameExcept("object.spec", "oldObject.spec", []string{"entrypoint", "rayClusterSpec", "suspend"}),
			Message:    "the spec of a started RayJob (a field besides entrypoint, rayClusterSpec and suspend): KubeRay reads it once, when it starts the run; " + Way,
		},
		{
			Expression: sameExcept("variables.newCluster", "variables.oldCluster", []string{"headGroupSpec", "suspend", "workerGroupSpecs"}),
			Message:    "the cluster spec of a started run (a RayJob's spec.rayClusterSpec, a RayCluster's spec, besides its groups and suspend): KubeRay never applies it to a running cluster; " + Way,
		},
		{
			Expression: head,
			Message:    "the head group of a started run (its pod template: image, command, volumes, the recipe ConfigMap): KubeRay never applies it to running Pods; " + Way,
		},
		{
			Expression: workers,
			Message:    "the worker groups of a started run (a pod template: image, command, volumes, the recipe ConfigMap; a group added, removed or renamed; a group setting): KubeRay never applies them to running Pods; " + Way,
		},
		{
			Expression: "variables.liveScale || variables.newWorkers.all(g, variables.oldWorkers.all(h, h.groupName != g.groupName || (" + strings.Join(countCmp, " && ") + ")))",
			Message:    "the worker counts (replicas, minReplicas, maxReplicas) of a started RayJob or Kueue run: KubeRay reads a RayJob's cluster spec once, and Kueue admitted the run for the counts it had; " + Way,
		},
		{
			Expression: "variables.oldQueue == variables.newQueue",
			Message:    "the Kueue queue label " + vocab.KueueQueueLabel + " of a started run: Kueue admitted it in its queue, and a queue change never moves it; " + Way,
		},
	}
}

// sameExcept is CEL for "maps a and b hold the same keys and values, keys
// in skip left out"; its iteration variable k is used by no enclosing
// macro.
func sameExcept(a, b string, skip []string) string {
	const v = "k"
	quoted := make([]string, len(skip))
	for i, s := range skip {
		quoted[i] = "'" + s + "'"
	}
	in := v + " in [" + strings.Join(quoted, ", ") + "]"
	return a + ".all(" + v + ", " + in + " || (" + v + " in " + b + " && " + b + "[" + v + "] == " + a + "[" + v + "])) && " +
		b + ".all(" + v + ", " + in + " || " + v + " in " + a + ")"
}

// sameTemplate is CEL for "pod templates a and b are the same": the pod
// spec, and the labels and annotations but Kueue's marks. a and b may be
// optional values (CEL's ?. chains through them). Its iteration variable
// t is used by no enclosing macro.
func sameTemplate(a, b string) string {
	const v = "t"
	out := a + ".?spec.orValue({}) == " + b + ".?spec.orValue({})"
	mark := v + ".startsWith('" + kueueMarks + "')"
	for _, field := range []string{"labels", "annotations"} {
		ma, mb := a+".?metadata.?"+field, b+".?metadata.?"+field
		out += " && " + ma + ".orValue({}).all(" + v + ", " + mark + " || " + mb + "[?" + v + "] == " + ma + "[?" + v + "])" +
			" && " + mb + ".orValue({}).all(" + v + ", " + mark + " || " + ma + "[?" + v + "].hasValue())"
	}
	return out
}
