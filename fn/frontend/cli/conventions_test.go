package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/buildinfo"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// -o is the format, as in kubectl and helm; --output-file the file.
func TestRenderOutputFormat(t *testing.T) {
	r, p := qwen(t)
	args := []string{"render", r, "--infra", p, "--user", "alice"}
	code, yamlOut, stderr := clirun.Run(args...)
	require.Equal(t, cli.ExitOK, code, stderr)

	for _, tc := range []struct {
		name  string
		extra []string
		check func(t *testing.T, code int, out, stderr string)
	}{
		{"-o yaml is the default stream", []string{"-o", "yaml"}, func(t *testing.T, code int, out, _ string) {
			require.Equal(t, cli.ExitOK, code)
			require.Equal(t, yamlOut, out)
		}},
		{"-o json is a v1 List of the same objects", []string{"-o", "json"}, func(t *testing.T, code int, out, _ string) {
			require.Equal(t, cli.ExitOK, code)
			var list struct {
				APIVersion string           `json:"apiVersion"`
				Kind       string           `json:"kind"`
				Items      []map[string]any `json:"items"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &list))
			require.Equal(t, "List", list.Kind)
			docs := strings.Split(strings.TrimPrefix(yamlOut, "---\n"), "\n---\n")
			require.Len(t, list.Items, len(docs))
			for i, d := range docs {
				var want map[string]any
				require.NoError(t, yaml.Unmarshal([]byte(d), &want))
				require.Equal(t, want, list.Items[i], "item %d", i)
			}
		}},
		{"-o FILE, the old form, says what to write", []string{"-o", "run.yaml"}, func(t *testing.T, code int, out, stderr string) {
			require.Equal(t, cli.ExitUsage, code)
			require.Empty(t, out)
			require.Contains(t, stderr, "-o is the output format (yaml or json), as in kubectl; to write a file use --output-file run.yaml")
			_, err := os.Stat("run.yaml")
			require.True(t, os.IsNotExist(err), "no file named after the format")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := clirun.Run(append(args, tc.extra...)...)
			tc.check(t, code, out, stderr)
		})
	}

	file := filepath.Join(t.TempDir(), "run.json")
	code, out, stderr := clirun.Run(append(args, "-o", "json", "--output-file", file)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Empty(t, out)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, json.Valid(b))
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want func(t *testing.T, out string)
	}{
		{"text", nil, func(t *testing.T, out string) {
			require.True(t, strings.HasPrefix(out, "nrl-k8s "+cli.Version+" ("), out)
		}},
		{"short", []string{"--short"}, func(t *testing.T, out string) { require.Equal(t, cli.Version+"\n", out) }},
		{"json", []string{"-o", "json"}, func(t *testing.T, out string) {
			var bi buildinfo.Info
			require.NoError(t, json.Unmarshal([]byte(out), &bi))
			require.Equal(t, cli.Version, bi.Version)
			require.NotEmpty(t, bi.GoVersion)
			require.Contains(t, bi.Platform, "/")
		}},
		{"yaml", []string{"-o", "yaml"}, func(t *testing.T, out string) { require.Contains(t, out, "version: "+cli.Version+"\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := clirun.Run(append([]string{"version"}, tc.args...)...)
			require.Equal(t, cli.ExitOK, code, stderr)
			tc.want(t, out)
		})
	}
	code, _, stderr := clirun.Run("version", "-o", "xml")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, "expected json or yaml")
}

// `nrl-k8s schema profile` is the committed schema, byte for byte.
func TestSchemaCommand(t *testing.T) {
	code, out, stderr := clirun.Run("schema", "profile")
	require.Equal(t, cli.ExitOK, code, stderr)
	want, err := profile.SchemaJSON()
	require.NoError(t, err)
	require.Equal(t, string(want), out)
	code, out, _ = clirun.Run("schema", "profile", "-o", "markdown")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "| `kuberay.<role>.segmentSize` | integer or null |")
	code, _, stderr = clirun.Run("schema", "recipe")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, `unknown schema "recipe"; expected profile`)
}

// `nrl-k8s kustomize-config` prints the repository's kustomize/ files, byte
// for byte, so an overlay can take them from the binary it renders with.
func TestKustomizeConfigCommand(t *testing.T) {
	root := testenv.RepoRoot(t)
	for arg, file := range map[string]string{"configuration": "kustomize/nrl-k8s.configuration.yaml", "openapi": "kustomize/openapi/kuberay.json"} {
		code, out, stderr := clirun.Run("kustomize-config", arg)
		require.Equal(t, cli.ExitOK, code, stderr)
		require.Equal(t, testenv.ReadFile(t, filepath.Join(root, file)), out, arg)
	}
	code, _, stderr := clirun.Run("kustomize-config", "nope")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, `unknown file "nope"; expected configuration or openapi`)
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
