// Package layering holds the package tree to the architecture it shows
// (docs/architecture.md, "Package layout"): the engine's stages import only
// earlier stages, the engine never reaches a front end, an after-apply
// command or a cluster client, and analysers never reach a stage (they read
// the rendered document, below every stage) or a front end. The import
// graph is what decides it, so that is what this test reads.
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

// engine is every engine package a later layer may read.
var engine = []string{
	"fn/engine/load/", "fn/engine/resolve/",
	"fn/engine/check", "fn/engine/manifest", "fn/engine/emit", "fn/engine/pipeline", "fn/engine/batch",
}

// base is what every layer above fn/core/ may import: the building blocks
// and the data and names every layer shares.
var base = []string{"fn/support/", "fn/core/"}

func with(prefixes ...[]string) []string {
	var out []string
	for _, p := range prefixes {
		out = append(out, p...)
	}
	return out
}

// layers, lowest first: a layer may import only itself and layers above it
// in this list (TestNoBackEdge holds the table to that), so the list is the
// order data flows in. The first prefix matching a package is its layer; a
// package no prefix matches fails the test, so a new package is placed on
// purpose.
var layers = []layer{
	{prefix: "fn/support/", may: []string{"fn/support/"}, never: clusterClients},
	// Data every layer shares: the run parameters, the rendered document,
	// the NemoRLRun API type (a leaf any entry point reads, which never pulls
	// in the pipeline) and the vocabulary (labels, annotations, API groups).
	{prefix: "fn/core/", may: base, never: clusterClients},
	// Analysers read rendered documents and typed objects; the stages call them, never the reverse.
	{prefix: "fn/analyse/", may: with(base, []string{"fn/analyse/"}), never: clusterClients},
	// The scheduler integrations, one folder per scheduler: every stage may call them.
	{prefix: "fn/scheduler", may: with(base, []string{"fn/analyse/", "fn/scheduler"}), never: clusterClients},
	// The stages in pipeline order: load → resolve → check | build → emit → pipeline.
	// The profile's schema checks a topology constraint's keys in the order KAI reads them,
	// and hands its scheduler keys to the integrations.
	{prefix: "fn/engine/load/", may: with(base, []string{"fn/analyse/kai", "fn/scheduler", "fn/engine/load/"}), never: clusterClients},
	{prefix: "fn/engine/resolve/", may: with(base, []string{"fn/engine/load/", "fn/engine/resolve/"}), never: clusterClients},
	// check and build (manifest) both read the resolved run; neither reads the other.
	{prefix: "fn/engine/check", may: with(base, []string{"fn/engine/load/", "fn/engine/resolve/", "fn/engine/check", "fn/analyse/", "fn/scheduler"}), never: clusterClients},
	{prefix: "fn/engine/manifest", may: with(base, []string{"fn/engine/load/", "fn/engine/resolve/", "fn/engine/manifest", "fn/analyse/", "fn/scheduler"}), never: clusterClients},
	{prefix: "fn/engine/emit", may: base, never: clusterClients},
	{prefix: "fn/engine/pipeline", may: with(base, []string{"fn/analyse/", "fn/scheduler"}, engine[:len(engine)-1]), never: clusterClients},
	// Many runs in one process, on the one path.
	{prefix: "fn/engine/batch", may: with(base, []string{"fn/analyse/", "fn/scheduler"}, engine), never: clusterClients},
	{prefix: "fn/tooling/", may: with(base, []string{"fn/analyse/", "fn/scheduler", "fn/tooling/"}, engine), never: clusterClients},
	{prefix: "fn/afterapply/", may: with(base, []string{"fn/analyse/", "fn/scheduler", "fn/afterapply/"}, engine)},
	{prefix: "fn/frontend/", may: with(base, []string{"fn/analyse/", "fn/scheduler", "fn/afterapply/", "fn/tooling/", "fn/frontend/", "charts"}, engine)},
	{prefix: "fn/cmd/", may: []string{"fn/", "charts"}},
}

// integrations are the scheduler folders: the rest of fn/ reaches a
// scheduler through fn/scheduler (the interface) and fn/scheduler/registry,
// so adding one touches its folder and the registry alone.
var integrations = []string{"fn/scheduler/kai", "fn/scheduler/kueue", "fn/scheduler/defaultsched"}

// throughRegistry reports an import of an integration from outside
// fn/scheduler/.
func throughRegistry(rel, target string) bool {
	if matches(rel, "fn/scheduler/") {
		return false
	}
	for _, i := range integrations {
		if matches(target, i) {
			return true
		}
	}
	return false
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
			} else if throughRegistry(rel, target) {
				bad = append(bad, fmt.Sprintf("%s imports %s: a scheduler integration is reached through fn/scheduler/registry", rel, target))
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
		{"an analyser imports the emit stage", pkg{path: module + "fn/analyse/workload", imports: []string{module + "fn/engine/emit"}}, "fn/analyse/workload imports fn/engine/emit"},
		{"check imports the emit stage", pkg{path: module + "fn/engine/check", imports: []string{module + "fn/engine/emit"}}, "fn/engine/check imports fn/engine/emit"},
		{"the NemoRLRun type imports the pipeline", pkg{path: module + "fn/core/runspec", imports: []string{module + "fn/engine/pipeline"}}, "fn/core/runspec imports fn/engine/pipeline"},
		{"the core imports an analyser", pkg{path: module + "fn/core/rendered", imports: []string{module + "fn/analyse/kai"}}, "fn/core/rendered imports fn/analyse/kai"},
		{"a package in no layer", pkg{path: module + "fn/misc"}, "fn/misc: in no layer"},
		{"check imports an integration", pkg{path: module + "fn/engine/check", imports: []string{module + "fn/scheduler/kai"}}, "fn/engine/check imports fn/scheduler/kai: a scheduler integration is reached through fn/scheduler/registry"},
		{"preflight imports the default scheduler's", pkg{path: module + "fn/afterapply/preflight", imports: []string{module + "fn/scheduler/defaultsched"}}, "fn/afterapply/preflight imports fn/scheduler/defaultsched"},
		{"preflight imports Kueue's", pkg{path: module + "fn/afterapply/preflight", imports: []string{module + "fn/scheduler/kueue"}}, "fn/afterapply/preflight imports fn/scheduler/kueue: a scheduler integration is reached through fn/scheduler/registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := violations([]pkg{tc.p})
			require.Len(t, bad, 1)
			require.Contains(t, bad[0], tc.want)
		})
	}
}

// TestNoBackEdge holds the table itself to one direction: every prefix a
// layer may import names only that layer or layers listed before it, so
// no import the table allows points back up the flow (an analyser reading
// the emit stage, a stage reading a later one).
func TestNoBackEdge(t *testing.T) {
	require.Empty(t, backEdges(layers))
	// The check can fail: a table where an analyser may read the emit stage.
	bad := append([]layer{}, layers...)
	for i := range bad {
		if bad[i].prefix == "fn/analyse/" {
			bad[i].may = append([]string{"fn/engine/emit"}, bad[i].may...)
		}
	}
	require.Equal(t, []string{"fn/analyse/ may import fn/engine/emit, a later layer"}, backEdges(bad))
}

// backEdges lists each prefix a layer may import that names a layer after it.
func backEdges(ls []layer) []string {
	var bad []string
	for i, l := range ls {
		for _, m := range l.may {
			for j := i + 1; j < len(ls); j++ {
				if matches(ls[j].prefix, m) || matches(m, ls[j].prefix) {
					bad = append(bad, fmt.Sprintf("%s may import %s, a later layer", l.prefix, m))
					break
				}
			}
		}
	}
	return bad
}
