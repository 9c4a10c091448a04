package kueue

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Flavor is what of a ResourceFlavor reaches the pods Kueue admits on it.
type Flavor struct {
	Name        string
	NodeLabels  map[string]string
	NodeTaints  []corev1.Taint
	Tolerations []corev1.Toleration
}

// ResourceGroup is one of a ClusterQueue's resource groups: the resources
// it covers and its flavors, in the order Kueue tries them.
type ResourceGroup struct {
	Covered []corev1.ResourceName
	Flavors []string
}

// Admitted is a pod set as Kueue starts it: its pod spec with the node
// labels and tolerations of every flavor assigned to it merged in, and
// those flavors.
type Admitted struct {
	Spec    corev1.PodSpec
	Flavors []string
}

// Admit is the pod set as Kueue v0.17.0 admits it, quota aside: how
// placement (fn/analyse/placement, run by preflight) sees a pod set Kueue
// admits. For each
// resource the pods request, the flavor is the first of the group covering
// it that the pod set can use (pkg/scheduler/flavorassigner
// checkFlavorForPodSets): it tolerates the flavor's nodeTaints, and its
// nodeSelector and required node affinity, cut to the label keys of the
// group's flavors (flavorSelector), match the flavor's nodeLabels as a
// node. Then every assigned flavor's nodeLabels go into the pod set's
// nodeSelector and its tolerations are added (pkg/podset FromAssignment
// and Merge), for every pod set, a CPU head's included; a label the pod
// already sets to another value is Kueue's merge error. flavors missing
// from the map are skipped, as Kueue skips a flavor it cannot find.
func Admit(spec *corev1.PodSpec, requests corev1.ResourceList, groups []ResourceGroup, flavors map[string]Flavor) (Admitted, error) {
	out := Admitted{Spec: *spec.DeepCopy()}
	seen := map[string]bool{}
	names := make([]string, 0, len(requests))
	for n, q := range requests {
		if !q.IsZero() && n != corev1.ResourcePods {
			names = append(names, string(n))
		}
	}
	sort.Strings(names)
	for _, name := range names {
		g := groupOf(groups, corev1.ResourceName(name))
		if g == nil {
			continue // a resource no group covers: Kueue never admits it (preflight's LocalQueue line says so)
		}
		f, why := pick(spec, g, flavors)
		if f == nil {
			return out, fmt.Errorf("no flavor of the resource group covering %s fits the pod set: %s", name, why)
		}
		if !seen[f.Name] {
			seen[f.Name] = true
			out.Flavors = append(out.Flavors, f.Name)
		}
	}
	for _, name := range out.Flavors {
		f := flavors[name]
		for _, k := range tree.SortedKeys(f.NodeLabels) {
			if v, ok := out.Spec.NodeSelector[k]; ok && v != f.NodeLabels[k] {
				return out, fmt.Errorf("flavor %s's nodeLabels set %s=%s, and the pod set selects %s=%s: Kueue's merge refuses the conflict", name, k, f.NodeLabels[k], k, v)
			}
			if out.Spec.NodeSelector == nil {
				out.Spec.NodeSelector = map[string]string{}
			}
			out.Spec.NodeSelector[k] = f.NodeLabels[k]
		}
		for _, t := range f.Tolerations {
			if !slices.ContainsFunc(out.Spec.Tolerations, func(o corev1.Toleration) bool { return o.MatchToleration(&t) && o == t }) {
				out.Spec.Tolerations = append(out.Spec.Tolerations, t)
			}
		}
	}
	return out, nil
}

func groupOf(groups []ResourceGroup, name corev1.ResourceName) *ResourceGroup {
	for i := range groups {
		if slices.Contains(groups[i].Covered, name) {
			return &groups[i]
		}
	}
	return nil
}

// pick is the first flavor of g the pod set can use, or why none.
func pick(spec *corev1.PodSpec, g *ResourceGroup, flavors map[string]Flavor) (*Flavor, string) {
	keys := map[string]bool{}
	for _, name := range g.Flavors {
		for k := range flavors[name].NodeLabels {
			keys[k] = true
		}
	}
	selector := flavorSelector(spec, keys)
	var why []string
	for _, name := range g.Flavors {
		f, ok := flavors[name]
		if !ok {
			why = append(why, "flavor "+name+" not found")
			continue
		}
		noSchedule := func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}
		if t, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), f.NodeTaints, append(slices.Clone(spec.Tolerations), f.Tolerations...), noSchedule, true); bad {
			why = append(why, fmt.Sprintf("untolerated taint %s in flavor %s", t.ToString(), name))
			continue
		}
		if ok, err := selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: f.NodeLabels}}); err != nil || !ok {
			why = append(why, "flavor "+name+" doesn't match node affinity")
			continue
		}
		return &f, ""
	}
	return nil, strings.Join(why, "; ")
}

// flavorSelector is the pod set's nodeSelector and required node affinity
// cut to the keys the group's flavors label (Kueue's flavorSelector).
func flavorSelector(spec *corev1.PodSpec, keys map[string]bool) nodeaffinity.RequiredNodeAffinity {
	var cut corev1.PodSpec
	for k, v := range spec.NodeSelector {
		if keys[k] {
			if cut.NodeSelector == nil {
				cut.NodeSelector = map[string]string{}
			}
			cut.NodeSelector[k] = v
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []corev1.NodeSelectorTerm
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var exprs []corev1.NodeSelectorRequirement
			for _, e := range t.MatchExpressions {
				if keys[e.Key] {
					exprs = append(exprs, e)
				}
			}
			if len(exprs) == 0 {
				// An emptied term matches any flavor: the terms are ORed.
				terms = nil
				break
			}
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: exprs})
		}
		if len(terms) > 0 {
			cut.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	return nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: cut})
}
