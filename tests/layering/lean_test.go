package layering_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// leanBinary is the KRM function alone (the image's entrypoint, the exec
// function): it links the engine and the KRM adapter and nothing a
// command line or a cluster needs, so a render pays no init of theirs.
const leanBinary = "fn/cmd/nrl-krm"

// leanNever are the import-path prefixes the lean binary must not link:
// every cluster client and the CLI's command line and Helm (clusterClients),
// client-go as a whole, and kyaml's framework package with kube-openapi's
// validator, whose init every start would pay (krm restates the results
// type: fn/frontend/krm/results.go).
var leanNever = with(clusterClients, []string{
	"k8s.io/client-go/", "sigs.k8s.io/kustomize/kyaml/fn/framework", "k8s.io/kube-openapi/pkg/validation/validate",
	module + "fn/frontend/cli", module + "fn/afterapply/",
})

// leanViolations lists each dependency of the lean binary a leanNever
// prefix matches.
func leanViolations(deps []string) []string {
	var bad []string
	for _, d := range deps {
		for _, n := range leanNever {
			if matches(d, n) || strings.HasPrefix(d, n) {
				bad = append(bad, d+" (matches "+n+")")
				break
			}
		}
	}
	return bad
}

func TestLeanFunctionBinary(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./"+leanBinary)
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go list -deps ./%s:\n%s", leanBinary, out)
	deps := strings.Fields(string(out))
	for _, want := range []string{"fn/frontend/krm", "fn/engine/pipeline", "fn/engine/batch"} {
		require.Contains(t, deps, module+want, "the lean binary renders with the engine through the KRM adapter")
	}
	require.Empty(t, leanViolations(deps), "the lean binary links what only the CLI or a cluster needs; find the importer with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./%s`", leanBinary)
}

// The check can fail: each kind of forbidden dependency is named.
func TestLeanFunctionBinaryRefuses(t *testing.T) {
	for _, dep := range []string{
		"github.com/spf13/cobra", "k8s.io/client-go/rest", "k8s.io/client-go/util/homedir", "helm.sh/helm/v3/pkg/chart",
		"sigs.k8s.io/kustomize/kyaml/fn/framework", "k8s.io/kube-openapi/pkg/validation/validate", module + "fn/frontend/cli",
	} {
		t.Run(dep, func(t *testing.T) {
			bad := leanViolations([]string{module + "fn/frontend/krm", dep})
			require.Len(t, bad, 1)
			require.Contains(t, bad[0], dep)
		})
	}
}
