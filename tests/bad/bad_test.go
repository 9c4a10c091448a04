// Package bad is the catalogue of bad inputs: each folder is one behaviour
// (its inputs, a run.yaml naming them, and expected/ with what the CLI and
// the KRM function say about them), in the spirit of kpt's function
// catalog. The binary is exec'd, so exit codes and stderr are pinned as a
// user sees them. Regenerate with `make golden` and review the diff.
package bad

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
)

func TestMain(m *testing.M) { clirun.Main(m) }

// badCase is one folder and its run, read without validation: some cases
// are bad run files.
type badCase struct {
	golden.Case
	run runspec.NemoRLRun
}

func cases(t *testing.T) []badCase {
	var out []badCase
	for _, c := range golden.Cases(t, ".", "run.yaml") {
		data, err := os.ReadFile(c.Input("run.yaml"))
		require.NoError(t, err)
		var r runspec.NemoRLRun
		require.NoError(t, yaml.Unmarshal(data, &r), c.Name)
		out = append(out, badCase{c, r})
	}
	require.GreaterOrEqual(t, len(out), 30, "the catalogue keeps at least 30 bad inputs")
	return out
}

// stage copies a case into a temp dir and generates what huge.txt lists
// ("FILE BYTES" per line: a YAML comment of that size), so no big file is
// committed.
func stage(t *testing.T, c badCase) (string, map[string][]byte) {
	dir := t.TempDir()
	files := map[string][]byte{}
	entries, err := os.ReadDir(c.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(c.Input(e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
		if e.Name() == "huge.txt" {
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				name, size, _ := strings.Cut(line, " ")
				n, err := strconv.Atoi(size)
				require.NoError(t, err, "huge.txt: %q", line)
				line := []byte("# a comment line of 32 bytes ..\n")
				data := bytes.Repeat(line, n/len(line)+1)[:n]
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
			}
			files["huge.txt"] = b
			continue
		}
		if e.Name() != "run.yaml" {
			files[e.Name()] = b
		}
	}
	return dir, files
}

// cliArgs turns the run into nrl-k8s flags.
func cliArgs(cmd string, r runspec.NemoRLRun) []string {
	args := []string{cmd, r.Spec.Recipe}
	if r.Spec.Profile != "" {
		args = append(args, "--infra", r.Spec.Profile)
	}
	if r.Spec.Mode != "" {
		args = append(args, "--mode", r.Spec.Mode)
	}
	args = append(args, "--user", r.Spec.User)
	for _, f := range []struct{ flag, value string }{
		{"--namespace", r.Spec.Namespace}, {"--run-id", r.Spec.RunID}, {"--name", r.Spec.Name},
	} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return append(args, r.Spec.Overrides...)
}

func execBin(t *testing.T, dir string, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clirun.Exec(t, dir, dir, stdin, args...)
}

func TestGoldenBadInputs(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir, files := stage(t, c)

			code, _, stderr := execBin(t, dir, nil, cliArgs("render", c.run)...)
			cli := fmt.Sprintf("exit %d\n%s", code, stderr)
			require.NotZero(t, code, "render must fail:\n%s", stderr)
			require.Contains(t, stderr, "error", "render must say what is wrong")
			// check reports the same errors with the same exit code.
			ccode, cout, cerr := execBin(t, dir, nil, cliArgs("check", c.run)...)
			require.Equal(t, code, ccode, "check and render disagree:\n%s%s", cout, cerr)
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				require.Contains(t, cout+cerr, strings.TrimPrefix(line, "error: "), "check output misses a render error")
			}
			c.Check(t, "cli.txt", []byte(cli))

			if _, huge := files["huge.txt"]; huge {
				return // CLI only: a 64 MiB ConfigMap would test kyaml, not us
			}
			delete(files, "huge.txt")
			results := runKRM(t, c, dir, files)
			c.Check(t, "results.yaml", results)
		})
	}
}

// runKRM sends the case as kustomize would (run.yaml as functionConfig,
// the files as one input ConfigMap) to `nrl-k8s fn` and returns the exit
// code and the results it wrote.
func runKRM(t *testing.T, c badCase, dir string, files map[string][]byte) []byte {
	runYAML, err := os.ReadFile(c.Input("run.yaml"))
	require.NoError(t, err)
	fnConfig, err := kyaml.Parse(string(runYAML))
	require.NoError(t, err)
	cm, err := krm.FilesConfigMap("inputs", ".", files)
	require.NoError(t, err)
	var rl bytes.Buffer
	rl.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	item, err := cm.String()
	require.NoError(t, err)
	rl.WriteString("- " + strings.ReplaceAll(strings.TrimRight(item, "\n"), "\n", "\n  ") + "\n")
	fc, err := fnConfig.String()
	require.NoError(t, err)
	rl.WriteString("functionConfig:\n  " + strings.ReplaceAll(strings.TrimRight(fc, "\n"), "\n", "\n  ") + "\n")

	code, stdout, stderr := execBin(t, dir, rl.Bytes(), "fn")
	require.NotZero(t, code, "the function must exit non-zero:\n%s", stdout)
	var out struct {
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(stdout), &out), "stdout is a ResourceList:\n%s\nstderr:\n%s", stdout, stderr)
	errs := 0
	for _, r := range out.Results {
		if r["severity"] == "error" {
			errs++
			require.True(t, r["file"] != nil || r["resourceRef"] != nil,
				"an error result points at an input file or at the NemoRLRun: %v", r)
		}
	}
	require.NotZero(t, errs, "the function must report an error result:\n%s", stdout)
	b, err := yaml.Marshal(out.Results)
	require.NoError(t, err)
	return append([]byte(fmt.Sprintf("# exit %d\n", code)), b...)
}

// Every expected file belongs to a case that produces it.
func TestGoldenBadHasNoStrayFiles(t *testing.T) {
	for _, c := range cases(t) {
		want := []string{"cli.txt", "results.yaml"}
		if _, err := os.Stat(c.Input("huge.txt")); err == nil {
			want = []string{"cli.txt"}
		}
		require.Equal(t, want, c.ExpectedFiles(t), c.Name)
	}
}
