package krm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gen is a NemoRLRunGenerator config named runs with the lines after its
// metadata.
func gen(rest string) string {
	return "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRunGenerator\nmetadata: {name: runs}\n" + rest
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gen.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// The plugin's config is read strictly, each mistake named with what is
// expected.
func TestReadGeneratorConfig(t *testing.T) {
	cases := []struct{ name, config, err string }{
		{"every key", gen("files: ../..\nruns: [a.yaml, b.yaml]\nwarnings: ignore\n"), ""},
		{"an unknown key", gen("files: .\nruns: [a.yaml]\nrun: [x.yaml]\n"),
			`the generator config: error unmarshaling JSON: while decoding JSON: json: unknown field "run"; expected apiVersion, kind, metadata, files, runs and warnings`},
		{"another kind", strings.Replace(gen("files: .\nruns: [a]\n"), "kind: NemoRLRunGenerator", "kind: NemoRLRun", 1),
			"the generator config is a nemo-rl.nvidia.com/v1alpha1 NemoRLRun; expected apiVersion nemo-rl.nvidia.com/v1alpha1, kind NemoRLRunGenerator"},
		{"no files", gen("runs: [a.yaml]\n"), `NemoRLRunGenerator "runs": files is empty; expected the package root`},
		{"no runs", gen("files: .\n"), `NemoRLRunGenerator "runs": runs is empty; expected the files of NemoRLRun documents to render`},
		{"an empty run", gen("files: .\nruns: [a.yaml, '']\n"), `NemoRLRunGenerator "runs": runs[1] is empty; expected a file of NemoRLRun documents`},
		{"a warnings value of neither", gen("files: .\nruns: [a.yaml]\nwarnings: quiet\n"), `NemoRLRunGenerator "runs": warnings is "quiet"; expected fail (the default) or ignore`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ReadGeneratorConfig(writeTemp(t, tc.config))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, GeneratorConfig{APIVersion: "nemo-rl.nvidia.com/v1alpha1", Kind: PluginKind, Files: "../..",
				Runs: []string{"a.yaml", "b.yaml"}, Warnings: "ignore", Metadata: cfg.Metadata}, cfg)
			require.Equal(t, "runs", cfg.Metadata.Name)
		})
	}
	_, err := ReadGeneratorConfig(filepath.Join(t.TempDir(), "none.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The plugin renders a plain YAML stream, not a ResourceList; its command
// line and config are usage errors, a run's findings are not, and a warning
// fails the build unless the config says ignore.
func TestRunPlugin(t *testing.T) {
	const root = "../../.."
	warned := "files: .\nruns: [tests/golden/autoscaling-ceiling/run.yaml]\n"
	cases := []struct {
		name   string
		args   func(t *testing.T) []string
		usage  bool
		err    string // "" renders
		output string // in stdout when it renders
	}{
		{name: "no argument", args: func(*testing.T) []string { return nil }, usage: true,
			err: "nrl-k8s NemoRLRunGenerator: expected one argument, the generator config file kustomize passes; got 0"},
		{name: "two arguments", args: func(*testing.T) []string { return []string{"a", "b"} }, usage: true, err: "got 2"},
		{name: "a bad config", args: func(t *testing.T) []string { return []string{writeTemp(t, gen("files: .\n"))} }, usage: true,
			err: `nrl-k8s NemoRLRunGenerator: NemoRLRunGenerator "runs": runs is empty`},
		{name: "runs outside files", args: func(t *testing.T) []string { return []string{writeTemp(t, gen("files: .\nruns: [/etc/passwd]\n"))} },
			usage: true, err: `nrl-k8s: NemoRLRunGenerator "runs" runs[0] /etc/passwd`},
		{name: "a run renders", args: func(t *testing.T) []string {
			return []string{writeTemp(t, gen("files: .\nruns: [tests/golden/h100-multikueue/run.yaml]\n"))}
		}, output: "managedBy: kueue.x-k8s.io/multikueue"},
		{name: "a warning fails by default", args: func(t *testing.T) []string { return []string{writeTemp(t, gen(warned))} },
			err: `NemoRLRunGenerator "runs": failed on the findings above: kustomize shows a plugin's messages only when it fails`},
		{name: "a warning ignored", args: func(t *testing.T) []string { return []string{writeTemp(t, gen(warned+"warnings: ignore\n"))} },
			output: "kind: RayJob"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := RunPlugin(PluginOptions{Args: tc.args(t), Dir: root, Stdout: &out})
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Equal(t, tc.usage, errors.Is(err, ErrPluginUsage))
				if tc.usage {
					require.Empty(t, out.String())
				}
				return
			}
			require.NoError(t, err)
			require.Contains(t, out.String(), tc.output)
			require.NotContains(t, out.String(), "ResourceList")
		})
	}
}

// kustomize finds the plugin at <home>/<group>/<version>/<lowercase
// kind>/<kind>, and the process knows it runs as the plugin by its name.
func TestPluginName(t *testing.T) {
	require.Equal(t, filepath.FromSlash("/h/nemo-rl.nvidia.com/v1alpha1/nemorlrungenerator/NemoRLRunGenerator"), PluginPath("/h"))
	for argv0, want := range map[string]bool{
		PluginPath("/h"): true, "NemoRLRunGenerator": true, "/bin/nrl-krm": false, "/bin/nemorlrungenerator": false,
	} {
		require.Equal(t, want, IsKustomizePlugin(argv0), argv0)
	}
}
