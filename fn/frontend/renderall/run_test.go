package renderall

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

const kindRecipe = "examples/configs/grpo_math_1B.yaml"

// kindRepo is a git work tree holding a runs repository with run a (the
// kind profile and its recipe, below a recipe root) and a's committed
// manifest as render-all writes it.
func kindRepo(t *testing.T) string {
	t.Helper()
	root, dir := testenv.RepoRoot(t), t.TempDir()
	mkTree(t, dir, map[string]string{
		kindRecipe:     testenv.ReadFile(t, filepath.Join(root, "recipes", kindRecipe)),
		"profile.yaml": testenv.ReadFile(t, filepath.Join(root, "profiles/kind/grpo-math-1b-1n1g.kind-hostpath.infra.yaml")),
		"runs/a/run.yaml": "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata: {name: a}\nspec:\n  recipe: ../../" + kindRecipe +
			"\n  profile: ../../profile.yaml\n  user: alice\n",
	})
	testenv.GitCheckout(t, dir)
	o, _, _ := kindOptions(t, dir)
	_, err := Run(o)
	require.NoError(t, err)
	testenv.GitAdd(t, dir)
	return dir
}

// kindOptions is render-all on dir's default output directory, its gate
// refusing nothing, its output captured.
func kindOptions(t *testing.T, dir string) (Options, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	disk, err := source.ConfineRepo(dir, false)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	return Options{
		Disk: disk, Dir: dir, Out: filepath.Join(dir, ManifestsDir), DefaultOut: true, Rerun: "nrl-k8s render-all .",
		Gate:   func(io.Writer, *Result, Base, []byte) (bool, error) { return false, nil },
		Stdout: &stdout, Stderr: &stderr,
	}, &stdout, &stderr
}

// Run renders, then writes or (Check) compares, and fails for a run that
// failed, an output file it refuses, drift under Check, a stale
// kustomization or the gate's refusal; what it did not read it says.
func TestRun(t *testing.T) {
	a := filepath.Join(ManifestsDir, "a"+Ext)
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string, o *Options)
		failed bool
		err    string
		stdout string
		stderr string
	}{
		{name: "current", setup: func(*testing.T, string, *Options) {}, stdout: "1 run(s): 1 rendered, 0 changed, 0 failed\n"},
		{name: "current under check", setup: func(_ *testing.T, _ string, o *Options) { o.Check = true }},
		{name: "stale under check", setup: func(t *testing.T, dir string, o *Options) {
			o.Check = true
			mkTree(t, dir, map[string]string{a: "kind: Old\n"})
		}, failed: true, stdout: "--- a/manifests/a.yaml\n+++ b/manifests/a.yaml\n", stderr: "1 of 1 manifest(s) out of date: run `nrl-k8s render-all .`"},
		{name: "a control character in the diff", setup: func(t *testing.T, dir string, o *Options) {
			o.Check = true
			mkTree(t, dir, map[string]string{a: "kind: \x1b[2J\n"})
		}, failed: true, stderr: "manifests/a.yaml: the diff holds control characters or lines that read as CI log commands; they are printed escaped"},
		{name: "the gate refuses", setup: func(_ *testing.T, _ string, o *Options) {
			o.Check = true
			o.Gate = func(io.Writer, *Result, Base, []byte) (bool, error) { return true, nil }
		}, failed: true},
		{name: "an unusable --base", setup: func(_ *testing.T, dir string, o *Options) {
			o.Check, o.Base.Dir = true, filepath.Join(dir, "no-such")
		}, err: "--base: "},
		{name: "a failed run", setup: func(t *testing.T, dir string, _ *Options) {
			mkTree(t, dir, map[string]string{"runs/b/run.yaml": "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata: {name: b}\nspec: {recipe: no.yaml, user: alice}\n"})
			testenv.GitAdd(t, dir)
		}, failed: true, stdout: "2 run(s): 1 rendered, 0 changed, 1 failed\n", stderr: "1 run(s) failed to render, their manifests were left as they are: b\n"},
		{name: "a removed run's manifest goes", setup: func(t *testing.T, dir string, _ *Options) {
			run := filepath.Join(dir, "runs/a/run.yaml")
			mkTree(t, dir, map[string]string{"runs/a/run.yaml": testenv.ReadFile(t, run) + "  state: removed\n"})
		}, stdout: "removed manifests/a.yaml (the run is state: removed)\n"},
		{name: "a linked manifest", setup: func(t *testing.T, dir string, _ *Options) {
			require.NoError(t, os.Rename(filepath.Join(dir, a), filepath.Join(dir, "a.txt")))
			mkTree(t, dir, map[string]string{a: "->../a.txt"})
		}, failed: true, stderr: "manifests/a.yaml: is a symlink; refused: render-all reads and writes regular files only (remove it)\n"},
		{name: "an untracked manifest", setup: func(t *testing.T, dir string, _ *Options) {
			mkTree(t, dir, map[string]string{"manifests/b.yaml": "kind: B\n"})
		}, stderr: "manifests/b.yaml: not tracked by git; read as not committed"},
		{name: "the kustomization written", setup: func(_ *testing.T, _ string, o *Options) { o.Kustomization = true },
			stdout: "wrote manifests/kustomization.yaml\n"},
		{name: "the kustomization stale under check", setup: func(_ *testing.T, _ string, o *Options) { o.Kustomization, o.Check = true, true },
			failed: true, stdout: "+- a.yaml\n", stderr: "manifests/kustomization.yaml: out of date"},
		{name: "the kustomization not a regular file", setup: func(t *testing.T, dir string, o *Options) {
			o.Kustomization = true
			mkTree(t, dir, map[string]string{"manifests/kustomization.yaml": "->a.yaml"})
		}, err: "manifests/kustomization.yaml: not a regular file; refused"},
	}
	dir0 := kindRepo(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testenv.CopyDir(t, dir0, dir) // .git too: a work tree of its own
			o, stdout, stderr := kindOptions(t, dir)
			tc.setup(t, dir, &o)
			failed, err := Run(o)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.failed, failed, "%s%s", stdout, stderr)
			if tc.stdout == "" && !tc.failed && o.Check {
				assert.Empty(t, stdout.String())
			}
			assert.Contains(t, stdout.String(), tc.stdout)
			assert.Contains(t, stderr.String(), tc.stderr)
			assert.NotContains(t, stdout.String()+stderr.String(), "\x1b")
		})
	}
}
