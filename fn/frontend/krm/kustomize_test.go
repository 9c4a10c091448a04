package krm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
)

// kustomized marks an item as kustomize hands it to a transformer after
// namePrefix exp1- and namespace ml-prod (what TestKustomizeCLI* see from
// kustomize v5.8.0).
func kustomized(t *testing.T, n *yaml.RNode) *yaml.RNode {
	t.Helper()
	was := n.GetName()
	require.NoError(t, n.SetName("exp1-"+was))
	require.NoError(t, n.SetNamespace("ml-prod"))
	for k, v := range map[string]string{
		"config.k8s.io/id": "1", "internal.config.kubernetes.io/prefixes": "exp1-",
		"internal.config.kubernetes.io/previousNames": was + "," + was, "internal.config.kubernetes.io/previousNamespaces": "default,ml-prod",
	} {
		require.NoError(t, n.PipeE(yaml.SetAnnotation(k, v)))
	}
	return n
}

func errorsOf(rl *framework.ResourceList) []string {
	var out []string
	for _, r := range rl.Results {
		if r.Severity == framework.Error {
			f := ""
			if r.Field != nil {
				f = r.Field.Path
			}
			out = append(out, f+": "+r.Message)
		}
	}
	return out
}

// TestKustomizeTransformsOnlyItems: a NemoRLRun function config that the
// kustomization's namePrefix and namespace did not reach is refused,
// saying how; a renamed run item whose spec.name would pin its name is
// refused on spec.name; the same run items without spec.name render under
// kustomize's names.
func TestKustomizeTransformsOnlyItems(t *testing.T) {
	var items []*yaml.RNode
	for _, n := range qwenFiles(t) {
		items = append(items, kustomized(t, n))
	}
	rl := &framework.ResourceList{FunctionConfig: node(t, qwenRun), Items: items}
	require.Error(t, krmframework.Process(rl))
	errs := strings.Join(errorsOf(rl), "\n")
	require.Contains(t, errs, "namePrefix exp1- reached this kustomization's items but not the function config")
	require.Contains(t, errs, "expected the NemoRLRun under resources:")

	// A run item as kustomize's namespace: left it: spec.namespace, which
	// would conflict with it, is not written.
	sweep := strings.Replace(strings.Replace(qwenRun, "  name: qwen3-30b-math-gb300\n", "  name: sweep\n", 1), "  namespace: default\n", "", 1)
	run := kustomized(t, node(t, sweep+"  name: pinned\n"))
	rl = &framework.ResourceList{FunctionConfig: node(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn}\n"), Items: append(append([]*yaml.RNode{}, items...), run)}
	require.Error(t, krmframework.Process(rl))
	require.Contains(t, strings.Join(errorsOf(rl), "\n"), `spec.name: item: kustomize renamed this NemoRLRun exp1-sweep (was sweep), but spec.name "pinned" fixes the run name`)

	run = kustomized(t, node(t, sweep))
	rl = &framework.ResourceList{FunctionConfig: node(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn}\n"), Items: append(append([]*yaml.RNode{}, items...), run)}
	require.NoError(t, krmframework.Process(rl), "%v", errorsOf(rl))
	var names []string
	for _, n := range rl.Items {
		if n.GetKind() == "RayJob" {
			names = append(names, n.GetNamespace()+"/"+n.GetName())
		}
	}
	require.Equal(t, []string{"ml-prod/exp1-sweep"}, names)

	// kustomize's namespace alone (its own or an overlay's, passed down to
	// the base's items): the function config's run goes there too.
	items = nil
	for _, n := range qwenFiles(t) {
		require.NoError(t, n.SetNamespace("ml-prod"))
		require.NoError(t, n.PipeE(yaml.SetAnnotation("config.k8s.io/id", "1")))
		require.NoError(t, n.PipeE(yaml.SetAnnotation("internal.config.kubernetes.io/previousNamespaces", "default")))
		items = append(items, n)
	}
	rl = &framework.ResourceList{FunctionConfig: node(t, qwenRun), Items: items}
	require.NoError(t, krmframework.Process(rl), "%v", errorsOf(rl))
	names = nil
	for _, n := range rl.Items {
		if n.GetKind() == "RayJob" {
			names = append(names, n.GetNamespace()+"/"+n.GetName())
		}
	}
	require.Equal(t, []string{"ml-prod/qwen3-30b-math-gb300"}, names)
}
