// Package startup keeps package initialisation that only some commands need
// out of the nrl-k8s binary. Go runs the init of every package a binary
// links, in every process, whichever command it runs: a package linked for
// one command is paid for by `version`, `render` and every KRM function
// call (docs/performance.md, "Process start", has the figures). The import graph is
// what decides it, so that is what this test reads.
package startup_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// forbidden are import-path prefixes the CLI must not link, each with why
// and what to use instead. A prefix ending in "/" covers a package tree;
// the first entry that matches gives the reason, so narrower ones go first.
var forbidden = []struct{ prefix, why string }{
	{"github.com/google/cel-go/", "CEL: its type registry and standard library are built at init (with protobuf descriptors); " +
		"the CRDs' CEL rules are Go in fn/analyse/schema/rules.go, checked against the API server's CEL in tests/schema"},
	{"cel.dev/expr", "CEL's protobuf messages, registered at init"},
	{"google.golang.org/protobuf/reflect/protodesc", "builds protobuf file descriptors at init (linked by CEL)"},
	{"google.golang.org/protobuf/types/descriptorpb", "descriptor.proto registered at init (linked by CEL)"},
	{"k8s.io/apiextensions-apiserver/pkg/apiserver/validation", "links CEL, feature gates and its prometheus metrics; fn/analyse/schema restates the schema conversion and error wording it needs (createpath.go)"},
	{"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel", "the API server's CEL validator: CEL, its environment and metrics"},
	{"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting", "its validation.go links CEL; fn/analyse/schema/createpath.go restates the defaulting algorithm"},
	{"k8s.io/apiserver/", "the API server's feature gates, CEL environment and metrics, all set up at init"},
	{"k8s.io/component-base/metrics", "component-base's legacy registry registers the Go and process collectors at init"},
	{"k8s.io/component-base/featuregate", "feature gate registries built at init"},
	{"github.com/prometheus/", "the default registry and its process collector, set up at init"},
	{"k8s.io/client-go/kubernetes/scheme", "registers every built-in API group's types at init; client-go's discovery and restmapper " +
		"packages link it (and protobuf descriptors): use the rest, dynamic or metadata clients, which do not"},
	{"k8s.io/client-go/kubernetes", "the typed clientset: its scheme registers every built-in API group at init; " +
		"talk to a cluster with client-go's dynamic client or rest client and unstructured objects"},
	{"k8s.io/kubectl/", "kubectl's packages register schemes and flags at init"},
	{"sigs.k8s.io/controller-runtime/pkg/client", "links client-go's typed scheme; the envtest tiers use it, the CLI never (the KubeRay API types' pkg/scheme builder is light and allowed)"},
	{"sigs.k8s.io/controller-runtime/pkg/metrics", "registers its prometheus metrics at init"},
	{"github.com/ray-project/kuberay/ray-operator/controllers/", "KubeRay's reconcilers (tests/operator links them, the CLI only the API types)"},
}

// The binary's import graph holds none of the forbidden packages.
func TestCLILinksNoInitHeavyPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./fn/cmd/nrl-k8s")
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go list -deps ./fn/cmd/nrl-k8s:\n%s", out)
	deps := strings.Fields(string(out))
	require.Greater(t, len(deps), 100, "go list printed too few packages to be the CLI's graph")
	require.Contains(t, deps, "github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema", "check --strict's validator is part of the binary")
	var bad []string
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f.prefix || (strings.HasSuffix(f.prefix, "/") && strings.HasPrefix(d, f.prefix)) || strings.HasPrefix(d, f.prefix+"/") {
				bad = append(bad, d+": "+f.why)
				break
			}
		}
	}
	require.Empty(t, bad, "nrl-k8s links packages whose init every process would pay; find the importer with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./fn/cmd/nrl-k8s`")
}
