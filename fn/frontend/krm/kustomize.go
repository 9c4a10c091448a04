package krm

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What kustomize records on the items it hands a transformer: its id of
// each item, and the history of names, namespaces and prefixes its
// built-in transformers (namespace, namePrefix, nameSuffix) changed.
const (
	kustomizeIDAnnotation   = "config.k8s.io/id"
	kustomizePrefixes       = "internal.config.kubernetes.io/prefixes"
	kustomizeSuffixes       = "internal.config.kubernetes.io/suffixes"
	kustomizePreviousNames  = "internal.config.kubernetes.io/previousNames"
	kustomizePreviousSpaces = "internal.config.kubernetes.io/previousNamespaces"
)

// errKustomizeTransformed is a run the kustomization's transformers reached
// in a way the run cannot follow.
var errKustomizeTransformed = errors.New("kustomize transformed")

// renamedByKustomize reports the name kustomize's namePrefix/nameSuffix
// gave an item it renamed, and the name it had.
func renamedByKustomize(n *yaml.RNode) (was string, ok bool) {
	a := annotations(n)
	if a[kustomizePrefixes] == "" && a[kustomizeSuffixes] == "" {
		return "", false
	}
	was, _, _ = strings.Cut(a[kustomizePreviousNames], ",")
	return was, was != "" && was != n.GetName()
}

// kustomizeChanges describes what the kustomization's built-in
// transformers did to the items of a transformer's ResourceList (nil when
// they are not kustomize's, or nothing changed): the prefixes and suffixes,
// and the labels every item got that fnLabels (the function config's) lack.
// The namespace is not among them: kustomizeNamespace applies it.
func kustomizeChanges(items []*yaml.RNode, fnLabels map[string]string) []string {
	var changes []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			changes = append(changes, s)
		}
	}
	var common map[string]string
	n := 0
	for _, it := range items {
		if !isMapping(it) {
			continue
		}
		a := annotations(it)
		if _, ok := a[kustomizeIDAnnotation]; !ok {
			continue
		}
		n++
		if p := a[kustomizePrefixes]; p != "" {
			add("namePrefix " + p)
		}
		if s := a[kustomizeSuffixes]; s != "" {
			add("nameSuffix " + s)
		}
		labels := it.GetLabels()
		if common == nil {
			common = labels
			continue
		}
		for k, v := range common {
			if labels[k] != v {
				delete(common, k)
			}
		}
	}
	if n == 0 {
		return nil
	}
	var keys []string
	for k, v := range common {
		if fnLabels[k] != v {
			keys = append(keys, k+"="+v)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("label " + k)
	}
	return changes
}

// kustomizeNamespace is the namespace kustomize's namespace transformer
// moved every item of a transformer's ResourceList to ("" when it moved
// none, or not all to one). The transformer of the kustomization itself
// and an overlay's (kustomize v5 passes an overlay's namespace down to a
// base's items before the base's transformers run) look the same here, and
// for both the run of the function config belongs there: its own
// kustomization leaves the function's output where the function puts it,
// an overlay moves it there anyway.
func kustomizeNamespace(items []*yaml.RNode) string {
	ns, moved := "", false
	for _, it := range items {
		if !isMapping(it) {
			continue
		}
		a := annotations(it)
		prev, ok := a[kustomizePreviousSpaces]
		if _, id := a[kustomizeIDAnnotation]; !id {
			continue
		}
		cur := it.GetNamespace()
		if !ok || cur == "" {
			return ""
		}
		if ns != "" && ns != cur {
			return ""
		}
		ns = cur
		for p := range strings.SplitSeq(prev, ",") {
			moved = moved || (p != "" && p != cur)
		}
	}
	if !moved {
		return ""
	}
	return ns
}

// functionConfigUntransformed is the error for a NemoRLRun function config
// of a kustomization whose namespace, namePrefix, nameSuffix or labels
// reached every item but not the config (kustomize never transforms a
// transformer's config): rendered as it is, that run would silently miss
// what every other run gets.
func functionConfigUntransformed(name string, changes []string) error {
	return fmt.Errorf("%w: %s reached this kustomization's items but not the function config (kustomize does not transform a transformer's config), so run %s would not get it; expected the NemoRLRun under resources: with a function config that only runs the function (a local-config ConfigMap carrying config.kubernetes.io/function, examples/kustomize-identity), or the runs under generators: (examples/kustomize-generator); docs/krm.md",
		errKustomizeTransformed, strings.Join(changes, ", "), name)
}
