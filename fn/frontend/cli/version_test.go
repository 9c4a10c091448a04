package cli_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/buildinfo"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// version prints the build as text, the version alone with --short, or
// JSON or YAML with -o; it takes no argument.
func TestVersion(t *testing.T) {
	runCases(t, []cliCase{
		{name: "text", args: []string{"version"}, out: "nrl-k8s " + cli.Version + " ("},
		{name: "short", args: []string{"version", "--short"}, out: cli.Version + "\n", exact: true},
		{name: "yaml", args: []string{"version", "-o", "yaml"}, out: "version: " + cli.Version + "\n"},
		{name: "xml", args: []string{"version", "-o", "xml"}, code: cli.ExitUsage, err: "expected json or yaml"},
		{name: "argument", args: []string{"version", "extra"}, code: cli.ExitUsage, err: `unknown command "extra" for "nrl-k8s version"`},
	})

	code, out, stderr := clirun.Run("version", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	var bi buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(out), &bi))
	require.Equal(t, cli.Version, bi.Version)
	require.NotEmpty(t, bi.GoVersion)
	require.Contains(t, bi.Platform, "/")
}

// Every build that ships a binary sets the version it reports: the
// Makefile (build, image) and the Dockerfile. The -X path is the package's
// real import path, so moving the variable breaks this test, not releases.
func TestBuildsSetVersion(t *testing.T) {
	pkg := strings.TrimSuffix(runtime.FuncForPC(reflect.ValueOf(cli.Main).Pointer()).Name(), ".Main")
	flag := "-X " + pkg + ".Version="
	for _, f := range []string{"Dockerfile", "Makefile"} {
		t.Run(f, func(t *testing.T) {
			require.Contains(t, testenv.ReadFile(t, filepath.Join(testenv.RepoRoot(t), f)), flag)
		})
	}
}
