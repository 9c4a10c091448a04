package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// runFile is a run of the kind profile and its recipe, copied into the
// repository (the recipe below examples/configs/, a recipe root); extra
// sets more spec fields or replaces the recipe or profile.
func runFile(name, extra string) string {
	spec := map[string]string{"recipe": "../../" + recipePath, "profile": "../../profile.yaml", "user": "alice"}
	for _, l := range strings.Split(strings.TrimSpace(extra), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			spec[k] = v
		}
	}
	out := "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata: {name: " + name + "}\nspec:\n"
	for _, k := range tree.SortedKeys(spec) {
		out += "  " + k + ": " + spec[k] + "\n"
	}
	return out
}

const recipePath = "examples/configs/grpo_math_1B.yaml"

// A runs repository is rendered as render-all renders it, inside its git
// work tree and from tracked files only (outside git, every file): a run
// that fails is left out and its errors returned, a removed run is absent,
// each run keeps its warnings; a repository with no run is an error.
func TestReadRunsRepo(t *testing.T) {
	cases := []struct {
		name      string
		runs      map[string]string // run name to the extra spec lines
		untracked map[string]string // runs written after git add
		ask       bool              // --untracked
		noGit     bool
		want      []string
		failed    map[string]string // run name to a part of its first error
		err       string
	}{
		{name: "every run", runs: map[string]string{"a": "", "b": "namespace: lab"}, want: []string{"a", "b"}},
		{name: "a failed run is left out", runs: map[string]string{"a": "", "b": "profile: ../../no_such.yaml"}, want: []string{"a"},
			failed: map[string]string{"b": "no_such.yaml"}},
		{name: "a removed run is absent", runs: map[string]string{"a": "", "b": "state: removed"}, want: []string{"a"}},
		{name: "an untracked run is refused", runs: map[string]string{"a": ""}, untracked: map[string]string{"b": ""}, want: []string{"a"},
			failed: map[string]string{"b": "runs/b/run.yaml"}},
		{name: "an untracked run asked for", runs: map[string]string{"a": ""}, untracked: map[string]string{"b": ""}, ask: true, want: []string{"a", "b"}},
		{name: "no runs", runs: map[string]string{}, err: ": no runs"},
		{name: "outside git every file counts", runs: map[string]string{"a": ""}, noGit: true, want: []string{"a"}},
	}
	root := testenv.RepoRoot(t)
	recipe := testenv.ReadFile(t, filepath.Join(root, "recipes", recipePath))
	profile := testenv.ReadFile(t, filepath.Join(root, "profiles/kind/grpo-math-1b-1n1g.kind-hostpath.infra.yaml"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(rel, data string) {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(data), 0o644))
			}
			write(recipePath, recipe)
			write("profile.yaml", profile)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
			for n, extra := range tc.runs {
				write("runs/"+n+"/run.yaml", runFile(n, extra))
			}
			if !tc.noGit {
				testenv.GitCheckout(t, dir)
			}
			for n, extra := range tc.untracked {
				write("runs/"+n+"/run.yaml", runFile(n, extra))
			}
			r, failed, err := readRunsRepo(dir, tc.ask)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, tree.SortedKeys(r))
			assert.Equal(t, len(tc.failed), len(failed), "%v", failed)
			for n, want := range tc.failed {
				require.NotEmpty(t, failed[n], n)
				assert.Contains(t, failed[n][0], want)
			}
			for n, run := range r {
				assert.Equal(t, "runs/"+n, run.File)
				assert.NotEmpty(t, run.Objects, n)
				// The kind profile's hostPath volumes: a warning, its path
				// relative to the repository.
				require.NotEmpty(t, run.Warnings, n)
				assert.True(t, strings.HasPrefix(run.Warnings[0], "profile.yaml: output RayJob/"+n+".spec."), run.Warnings[0])
			}
		})
	}
}

// The runs that failed on either side are named with their side and
// each error line, counted once per run; none is no error.
func TestRenderFailures(t *testing.T) {
	cases := []struct {
		name  string
		sides []FailedSide
		want  string
	}{
		{"none", []FailedSide{{Root: "old"}, {Root: "new", Failed: map[string][]string{}}}, ""},
		{"both sides", []FailedSide{
			{Root: "old", Failed: map[string][]string{"b": {"e1", "e2"}, "a": {"e0"}}},
			{Root: "new", Failed: map[string][]string{"c": {"e3"}}},
		}, "3 run(s) failed to render and are not in the summary:\nold: run a: e0\nold: run b: e1\nold: run b: e2\nnew: run c: e3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := RenderFailures(tc.sides...)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
		})
	}
}

// A run's warnings are its diagnostics of warning severity, without the
// prefix, each once, sorted.
func TestWarnings(t *testing.T) {
	ds := diag.List{
		{Severity: diag.Warning, File: "p.yaml", Message: "b"},
		{Severity: diag.Error, File: "p.yaml", Message: "e"},
		{Severity: diag.Info, File: "p.yaml", Message: "i"},
		{Severity: diag.Warning, File: "p.yaml", Message: "a"},
		{Severity: diag.Warning, File: "p.yaml", Message: "b"},
	}
	assert.Equal(t, []string{"p.yaml: a", "p.yaml: b"}, warnings(ds))
	assert.Nil(t, warnings(nil))
}

// rooted reads relative paths below its root, absolute ones as they are.
func TestRooted(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("x"), 0o644))
	r := rooted{root: dir}
	for _, name := range []string{"sub/f", filepath.Join(dir, "sub", "f")} {
		b, err := r.ReadFile(name)
		require.NoError(t, err, name)
		assert.Equal(t, "x", string(b))
	}
	_, err := r.ReadFile("f")
	assert.ErrorContains(t, err, filepath.Join(dir, "f"))
	assert.NoError(t, r.CheckDir("sub"))
}
