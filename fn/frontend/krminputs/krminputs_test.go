package krminputs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krminputs"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) { clirun.Main(m) }

func TestName(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"recipes/examples/configs", "nrl-recipes"},
		{"recipes/examples/configs/recipes/llm/performance", "nrl-recipes-llm-performance"},
		{"profiles/gb300", "nrl-profiles-gb300"},
		{"My Profiles/H100_nfs", "nrl-my-profiles-h100-nfs"},
		{".", "nrl-files"},
	} {
		t.Run(tc.dir, func(t *testing.T) { require.Equal(t, tc.want, krminputs.Name(tc.dir)) })
	}
}

// The whole defaults chain of each run, grouped by directory, each file once.
func TestCollect(t *testing.T) {
	root := testenv.RepoRoot(t)
	runs, err := krminputs.ReadRuns(source.Disk{}, []string{
		filepath.Join(root, "examples/kustomize/run.yaml"),
		filepath.Join(root, "examples/kustomize/runs.yaml"),
	})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	dirs, err := krminputs.Collect(source.Disk{}, root, runs)
	require.NoError(t, err)
	require.Equal(t, []krminputs.Dir{
		{Name: "nrl-profiles-gb300", Path: "profiles/gb300", Files: []string{"qwen3_30b_math_4n_4gpu.gb300.infra.yaml", "ultra_64n_pipeclean.gb300.infra.yaml"}},
		{Name: "nrl-recipes", Path: "recipes/examples/configs", Files: []string{"grpo_math_1B.yaml", "grpo_ultra_64n4g_pipeclean.yaml"}},
		{Name: "nrl-recipes-llm-performance", Path: "recipes/examples/configs/recipes/llm/performance", Files: []string{"grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "grpo-qwen3-30ba3b-4n4g.yaml"}},
	}, dirs)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	run := "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: r\nspec:\n  recipe: %s\n  profile: p.yaml\n  user: a\n"
	write("p.yaml", "image: x\n")
	write("r.yaml", "defaults: ../outside.yaml\n")
	for _, tc := range []struct{ name, file, want string }{
		{"no run in the file", write("none.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), "no NemoRLRun in the file"},
		{"absolute recipe", write("abs.yaml", strings.Replace(run, "%s", "/etc/r.yaml", 1)), "is absolute; expected a path relative to the run's file"},
		{"recipe leaves the root", write("up.yaml", strings.Replace(run, "%s", "../r.yaml", 1)), "relative to the run's file up.yaml, is not below the package root"},
		{"missing recipe", write("missing.yaml", strings.Replace(run, "%s", "nosuch.yaml", 1)), "nosuch.yaml"},
		{"chain leaves the root", write("leaves.yaml", strings.Replace(run, "%s", "r.yaml", 1)), "outside.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := krminputs.ReadRuns(source.Disk{}, []string{tc.file})
			if err == nil {
				_, err = krminputs.Collect(source.Disk{}, dir, runs)
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// The committed examples are what their runs need (make golden rewrites
// them with the CLI).
func TestExamplesAreFresh(t *testing.T) {
	root := testenv.RepoRoot(t)
	for example, files := range map[string][]string{
		"kustomize":           {"run.yaml", "runs.yaml"},
		"kustomize-container": {"run.yaml"},
		"kustomize-identity":  {"runs.yaml"},
	} {
		t.Run(example, func(t *testing.T) { kustomizeExampleIsFresh(t, root, example, files) })
	}
	t.Run("kpt", func(t *testing.T) {
		pkg := filepath.Join(root, "examples/kpt")
		runs, err := krminputs.ReadRuns(source.Disk{}, []string{filepath.Join(pkg, "run.yaml")})
		require.NoError(t, err)
		dirs, err := krminputs.Collect(source.Disk{}, root, runs)
		require.NoError(t, err)
		runFiles, err := krminputs.RunFiles(root, runs)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"qwen3-30b-math-gb300": "examples/kpt/run.yaml"}, runFiles)
		files, err := krminputs.KptFiles(source.Disk{}, dirs, runFiles, root)
		require.NoError(t, err)
		entries, err := os.ReadDir(filepath.Join(pkg, "inputs"))
		require.NoError(t, err)
		require.Len(t, entries, len(files), "inputs/ holds exactly the generated ConfigMaps")
		for name, want := range files {
			require.Equal(t, string(want), testenv.ReadFile(t, filepath.Join(pkg, "inputs", name)), "run `make golden`")
		}
	})
}

func TestReplaceBlockNeedsMarkers(t *testing.T) {
	_, err := krminputs.ReplaceBlock("resources: [a.yaml]\n", "x")
	require.ErrorContains(t, err, krminputs.BeginMarker)
}

// A new kustomization made of one run line and the generated block builds
// with the real kustomize into exactly what `nrl-k8s render` prints: the
// H100 profile, whose inputs no one wrote by hand.
func TestKustomizeBuildsGeneratedInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	kustomize := testenv.Tool(t, "NRL_KUSTOMIZE")
	root := testenv.RepoRoot(t)
	bin := clirun.Binary(t)
	// kustomize-inputs reads only inside --root (fn/engine/load/source's one rule), and
	// in a git work tree only tracked files: the run and its kustomization
	// live in a tree of their own holding copies of the inputs.
	tree := t.TempDir()
	for _, dir := range []string{"recipes", "profiles"} {
		require.NoError(t, os.CopyFS(filepath.Join(tree, dir), os.DirFS(filepath.Join(root, dir))))
	}
	kdir := filepath.Join(tree, "k")
	require.NoError(t, os.Mkdir(kdir, 0o755))
	run := `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: h100
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ` + bin + `
        args: [fn]
spec:
  recipe: ../recipes/examples/configs/recipes/llm/grpo-nano-v2-12b-2n8g-fsdp2tp1.yaml
  profile: ../profiles/h100/grpo-nano-v2-12b-2n8g.h100-nfs.infra.yaml
  user: alice
  namespace: rl
`
	require.NoError(t, os.WriteFile(filepath.Join(kdir, "run.yaml"), []byte(run), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(kdir, "kustomization.yaml"), []byte(
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"+
			krminputs.BeginMarker+"\n"+krminputs.EndMarker+"\n"+
			"transformers:\n- run.yaml\nsortOptions:\n  order: fifo\n"), 0o644))

	gen := exec.Command(bin, "kustomize-inputs", "-k", kdir, "--root", tree, "--write", filepath.Join(kdir, "run.yaml"))
	out, err := gen.CombinedOutput()
	require.NoError(t, err, "%s", out)
	check := exec.Command(bin, "kustomize-inputs", "-k", kdir, "--root", tree, "--check", filepath.Join(kdir, "run.yaml"))
	out, err = check.CombinedOutput()
	require.NoError(t, err, "--check after --write: %s", out)

	build := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "--load-restrictor", "LoadRestrictionsNone", kdir)
	var stderr bytes.Buffer
	build.Stderr = &stderr
	got, err := build.Output()
	require.NoError(t, err, "%s", stderr.String())

	render := exec.Command(bin, "render", "recipes/examples/configs/recipes/llm/grpo-nano-v2-12b-2n8g-fsdp2tp1.yaml",
		"--infra", "profiles/h100/grpo-nano-v2-12b-2n8g.h100-nfs.infra.yaml", "--user", "alice", "-n", "rl", "--name", "h100")
	render.Dir = root
	want, err := render.Output()
	require.NoError(t, err)
	require.Equal(t, string(bytes.TrimPrefix(want, []byte("---\n"))), string(got))
}

// kustomizeExampleIsFresh: examples/<example>'s generated configMapGenerator
// block is what its runs need.
func kustomizeExampleIsFresh(t *testing.T, root, example string, files []string) {
	t.Helper()
	kdir := filepath.Join(root, "examples", example)
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(kdir, f))
	}
	runs, err := krminputs.ReadRuns(source.Disk{}, paths)
	require.NoError(t, err)
	dirs, err := krminputs.Collect(source.Disk{}, root, runs)
	require.NoError(t, err)
	runFiles, err := krminputs.RunFiles(root, runs)
	require.NoError(t, err)
	block, err := krminputs.KustomizeBlock(dirs, runFiles, root, kdir)
	require.NoError(t, err)
	cur := testenv.ReadFile(t, filepath.Join(kdir, "kustomization.yaml"))
	next, err := krminputs.ReplaceBlock(cur, block)
	require.NoError(t, err)
	require.Equal(t, cur, next, "run `make golden`")
}

// A relative root and an absolute kustomization directory inside it (or
// the other way round) give the same block: paths are related absolutely.
func TestKustomizeBlockMixedPaths(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	dirs := []krminputs.Dir{{Name: "nrl-configs", Path: "configs", Files: []string{"r.yaml"}}}
	runFiles := map[string]string{"a": "deploy/runs.yaml"}
	want, err := krminputs.KustomizeBlock(dirs, runFiles, ".", "deploy")
	require.NoError(t, err)
	require.Contains(t, want, "  - ../configs/r.yaml\n")
	for _, c := range [][2]string{{".", filepath.Join(root, "deploy")}, {root, "deploy"}} {
		got, err := krminputs.KustomizeBlock(dirs, runFiles, c[0], c[1])
		require.NoError(t, err, "root %s, -k %s", c[0], c[1])
		require.Equal(t, want, got)
	}
}
