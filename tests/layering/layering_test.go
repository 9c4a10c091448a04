// Package layering holds the package tree to the architecture it shows
// (docs/architecture.md, "Package layout"): the engine's stages import only
// earlier stages, the engine never reaches a front end, an after-apply
// command or a cluster client, and analysers never reach a front end. The
// import graph is what decides it, so that is what this test reads.
package layering_test

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

const module = "github.com/nemo-rl-krm/nemo-rl-krm/"

// layer is one group of packages: the module packages its non-test code
// may import, and the outside packages it must not link at all.
type layer struct {
	prefix string   // path below the module, "/"-terminated for a tree
	may    []string // prefixes this layer may import (its own included)
	never  []string // outside import-path prefixes no package of it may link
}

// clusterClients are what talks to a cluster or a command line: only
// after-apply code, front ends and binaries may link them. (KubeRay's API
// types link controller-runtime's scheme builder, which talks to nothing.)
var clusterClients = []string{
	"k8s.io/client-go/rest", "k8s.io/client-go/tools/", "k8s.io/client-go/kubernetes", "k8s.io/client-go/dynamic",
	"sigs.k8s.io/controller-runtime/pkg/client", "sigs.k8s.io/controller-runtime/pkg/manager",
	"github.com/spf13/cobra", "helm.sh/helm/",
}

// layers, most specific first: the first prefix matching a package is its
// layer. A package no prefix matches fails the test, so a new package is
// placed on purpose.
var layers = []layer{
	{prefix: "fn/support/", may: []string{"fn/support/"}, never: clusterClients},
	// Data every stage shares: the run parameters and the emitted document.
	{prefix: "fn/engine/runparams", may: []string{"fn/support/"}, never: clusterClients},
	{prefix: "fn/engine/emit", may: []string{"fn/support/"}, never: clusterClients},
	// The stages in pipeline order: load → resolve → check | build → pipeline.
	{prefix: "fn/engine/load/", may: []string{"fn/support/", "fn/engine/runparams", "fn/engine/emit", "fn/engine/load/"}, never: clusterClients},
	{prefix: "fn/engine/resolve/", may: []string{"fn/support/", "fn/engine/runparams", "fn/engine/emit", "fn/engine/load/", "fn/engine/resolve/"}, never: clusterClients},
	// check and build (manifest) both read the resolved run; neither reads the other.
	{prefix: "fn/engine/check", may: []string{"fn/support/", "fn/engine/runparams", "fn/engine/emit", "fn/engine/load/", "fn/engine/resolve/", "fn/engine/check", "fn/analyse/"}, never: clusterClients},
	{prefix: "fn/engine/manifest", may: []string{"fn/support/", "fn/engine/runparams", "fn/engine/emit", "fn/engine/load/", "fn/engine/resolve/", "fn/engine/manifest", "fn/analyse/"}, never: clusterClients},
	{prefix: "fn/engine/pipeline", may: []string{"fn/support/", "fn/engine/", "fn/analyse/"}, never: clusterClients},
	// Many runs in one process, on the one path.
	{prefix: "fn/engine/batch", may: []string{"fn/support/", "fn/engine/", "fn/analyse/"}, never: clusterClients},
	// Analysers read rendered documents and typed objects; they never call back into the pipeline.
	{prefix: "fn/analyse/", may: []string{"fn/support/", "fn/engine/emit", "fn/analyse/"}, never: clusterClients},
	{prefix: "fn/tooling/", may: []string{"fn/support/", "fn/engine/", "fn/analyse/", "fn/tooling/"}, never: clusterClients},
	{prefix: "fn/afterapply/", may: []string{"fn/support/", "fn/engine/", "fn/analyse/", "fn/afterapply/"}},
	{prefix: "fn/frontend/", may: []string{"fn/support/", "fn/engine/", "fn/analyse/", "fn/afterapply/", "fn/tooling/", "fn/frontend/", "charts"}},
	{prefix: "fn/cmd/", may: []string{"fn/", "charts"}},
}

type pkg struct {
	path          string
	imports, deps []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports ","}}|{{join .Deps ","}}`, "./fn/...")
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./fn/...")
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		require.Len(t, f, 3, "go list line %q", line)
		pkgs = append(pkgs, pkg{path: f[0], imports: split(f[1]), deps: split(f[2])})
	}
	require.Greater(t, len(pkgs), 30, "go list printed too few packages to be fn/")
	return pkgs
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func matches(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/")
}

func layerOf(rel string) (layer, bool) {
	for _, l := range layers {
		if matches(rel, l.prefix) {
			return l, true
		}
	}
	return layer{}, false
}

// violations lists every import a package's layer does not allow.
func violations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.path, module)
		l, ok := layerOf(rel)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer; place it in the table of tests/layering and docs/architecture.md", rel))
			continue
		}
		for _, imp := range p.imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			target := strings.TrimPrefix(imp, module)
			allowed := false
			for _, m := range l.may {
				allowed = allowed || matches(target, m)
			}
			if !allowed {
				bad = append(bad, fmt.Sprintf("%s imports %s: layer %s may import only %v", rel, target, l.prefix, l.may))
			}
		}
		for _, d := range p.deps {
			for _, n := range l.never {
				if matches(d, n) || strings.HasPrefix(d, n) {
					bad = append(bad, fmt.Sprintf("%s links %s: layer %s never reaches a cluster client or a command line", rel, d, l.prefix))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	require.Empty(t, violations(pkgs), "find the importer with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./fn/...`")
}

// The table can fail: each forbidden edge the layering names is reported.
func TestLayeringRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    pkg
		want string
	}{
		{"engine imports a front end", pkg{path: module + "fn/engine/check", imports: []string{module + "fn/frontend/cli"}}, "fn/engine/check imports fn/frontend/cli"},
		{"engine imports after-apply code", pkg{path: module + "fn/engine/pipeline", imports: []string{module + "fn/afterapply/kube"}}, "fn/engine/pipeline imports fn/afterapply/kube"},
		{"engine links client-go", pkg{path: module + "fn/engine/manifest", deps: []string{"k8s.io/client-go/rest"}}, "fn/engine/manifest links k8s.io/client-go/rest"},
		{"a stage imports a later one", pkg{path: module + "fn/engine/load/profile", imports: []string{module + "fn/engine/check"}}, "fn/engine/load/profile imports fn/engine/check"},
		{"check imports build", pkg{path: module + "fn/engine/check", imports: []string{module + "fn/engine/manifest"}}, "fn/engine/check imports fn/engine/manifest"},
		{"an analyser imports a front end", pkg{path: module + "fn/analyse/podsecurity", imports: []string{module + "fn/frontend/review"}}, "fn/analyse/podsecurity imports fn/frontend/review"},
		{"an analyser imports the pipeline", pkg{path: module + "fn/analyse/prereq", imports: []string{module + "fn/engine/pipeline"}}, "fn/analyse/prereq imports fn/engine/pipeline"},
		{"support imports the engine", pkg{path: module + "fn/support/tree", imports: []string{module + "fn/engine/emit"}}, "fn/support/tree imports fn/engine/emit"},
		{"a package in no layer", pkg{path: module + "fn/misc"}, "fn/misc: in no layer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := violations([]pkg{tc.p})
			require.Len(t, bad, 1)
			require.Contains(t, bad[0], tc.want)
		})
	}
}
