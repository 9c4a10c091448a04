package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

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

// render takes a RECIPE and known flags; a run with an error finding
// prints its findings on stderr and no object (exit 1).
func TestRenderRefusals(t *testing.T) {
	r, p := qwen(t)
	runCases(t, []cliCase{
		{name: "no recipe", args: []string{"render"}, code: cli.ExitUsage, err: "requires at least 1 arg(s), only received 0"},
		{name: "unknown flag", args: []string{"render", "--no-such-flag", "r.yaml"}, code: cli.ExitUsage, err: "unknown flag: --no-such-flag"},
		{name: "-o without a value", args: []string{"render", "-o"}, code: cli.ExitUsage, err: "flag needs an argument: 'o' in -o"},
		{name: "error finding", args: []string{"render", r, "cluster.gpus_per_node=8", "--infra", p, "--user", "alice"}, code: cli.ExitError, exact: true,
			err: "error: " + p + ": kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[*].resources.limits[nvidia.com/gpu]: found 4 GPUs per worker"},
	})
}

func TestRenderWritesFileAndNamespaceOverride(t *testing.T) {
	r, p := qwen(t)
	out := filepath.Join(t.TempDir(), "sub", "run.yaml")
	code, stdout, stderr := clirun.Run("render", r, "--infra", p, "--user", "alice", "-n", "team-a", "--output-file", out)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Empty(t, stdout)
	data := testenv.ReadFile(t, out)
	require.Equal(t, 3, strings.Count(data, "\nkind: "))
	require.Equal(t, 3, strings.Count(data, "namespace: team-a"))
	require.NotContains(t, data, "&id")
}
