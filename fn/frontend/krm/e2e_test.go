package krm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// End-to-end: the built binary as an exec function under kustomize (in
// process through krusty, and the pinned kustomize CLI) and kpt. Each runs
// on a copy of the repository layout the example expects (examples/,
// recipes/, profiles/, bin/nrl-k8s and bin/nrl-krm), so examples/kustomize
// is used exactly as committed: its exec path ../../bin/nrl-krm finds the
// fresh binary.

const krustyGolden = "testdata/krusty/expected.yaml"

func TestMain(m *testing.M) { clirun.Main(m) }

// exampleTree copies what examples/<name> needs into a temp dir and
// returns the example's directory there.
func exampleTree(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"examples/" + name, "recipes", "profiles", "kustomize"} {
		copyDir(t, filepath.Join(repoRoot, d), filepath.Join(root, d))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	for _, name := range []string{clirun.CLI, clirun.Lean} {
		bin, err := os.ReadFile(clirun.BinaryNamed(t, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, "bin", name), bin, 0o755))
	}
	// A repository, as the examples are: a generator's files: ../.. must
	// stay inside the work tree holding the kustomization.
	testenv.GitCheckout(t, root)
	return filepath.Join(root, "examples", name)
}

func copyDir(t *testing.T, from, to string) { t.Helper(); testenv.CopyDir(t, from, to) }

// renderExample is what `nrl-k8s render` writes for the example's two
// runs, as one kustomize-style stream (kustomize writes no leading ---).
func renderExample(t *testing.T) []byte {
	t.Helper()
	bin := clirun.Binary(t)
	var all bytes.Buffer
	for _, args := range [][]string{
		{"render", "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
			"--infra", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml", "--user", "alice", "-n", "default",
			"--name", "qwen3-30b-math-gb300"},
		{"render", "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "--infra", "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml",
			"--mode", "raycluster", "--run-id", "pc1", "--user", "alice", "-n", "default", "--name", "ultra-64n-gb300"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = repoRoot
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "nrl-k8s %v: %s", args, stderr.String())
		all.Write(out)
	}
	return bytes.TrimPrefix(all.Bytes(), []byte("---\n"))
}

// TestGoldenKrusty builds examples/kustomize in process with exec
// functions enabled, as `kustomize build --enable-alpha-plugins
// --enable-exec --load-restrictor LoadRestrictionsNone` does.
func TestGoldenKrusty(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the nrl-k8s binary")
	}
	dir := exampleTree(t, "kustomize")
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	// The example's sortOptions decide, as they do for the CLI.
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err)
	got, err := m.AsYaml()
	require.NoError(t, err)
	golden.File(t, krustyGolden, got)
	require.Equal(t, string(renderExample(t)), string(got), "kustomize output must be nrl-k8s render's, byte for byte")
}

// TestKustomizeCLI runs the pinned kustomize (make test exports
// NRL_KUSTOMIZE) on the committed example.
func TestKustomizeCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the kustomize CLI: not in -short (make unit, make race)")
	}
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("NRL_KUSTOMIZE is not set; CI must run the kustomize end-to-end test (make test sets it)")
		}
		t.Skip("NRL_KUSTOMIZE not set (make test sets it via hack/tools.sh)")
	}
	dir := exampleTree(t, "kustomize")
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec",
		"--load-restrictor", "LoadRestrictionsNone", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	want, err := os.ReadFile(krustyGolden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	// Warnings reach the kustomize user: kustomize shows an exec function's
	// stderr, not its results.
	require.Contains(t, stderr.String(), "6 nodes will sit idle")
}

// TestKustomizeCLIOverlay builds examples/kustomize-overlay (namespace,
// namePrefix and labels over the rendered runs, with the shipped
// transformer configuration) and checks that the runs stay whole: every
// object in the namespace, prefixed and labelled, every reference naming
// an object of the output.
func TestKustomizeCLIOverlay(t *testing.T) {
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set")
	}
	dir := exampleTree(t, "kustomize")
	root := filepath.Dir(filepath.Dir(dir))
	copyDir(t, filepath.Join(repoRoot, "examples/kustomize-overlay"), filepath.Join(root, "examples/kustomize-overlay"))
	copyDir(t, filepath.Join(repoRoot, "kustomize"), filepath.Join(root, "kustomize"))
	testenv.GitAdd(t, root)
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec",
		"--load-restrictor", "LoadRestrictionsNone", filepath.Join(root, "examples/kustomize-overlay"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	objs := splitObjects(t, got)
	require.Len(t, objs, 9, "both runs, every object")
	instances := map[string]bool{}
	for _, o := range objs {
		id := o.ID()
		require.Equal(t, "ml-prod", o.Namespace, id)
		require.True(t, strings.HasPrefix(o.Name, "exp1-"), id)
		require.Equal(t, "rl-42", o.Labels["cost-center"], id)
		require.NotEmpty(t, o.Labels["app.kubernetes.io/instance"], id)
		instances[o.Labels["app.kubernetes.io/instance"]] = true
	}
	require.True(t, instances["qwen3-30b-math-gb300"] && instances["ultra-64n-gb300"], "%v", instances)
	requireReferencesResolve(t, objs)
}

// TestKustomizeCLIError: an error result fails the build, with the
// message on stderr.
func TestKustomizeCLIError(t *testing.T) {
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set")
	}
	dir := exampleTree(t, "kustomize")
	run := filepath.Join(dir, "run.yaml")
	b, err := os.ReadFile(run)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(run, bytes.Replace(b, []byte("user: alice"), []byte("user: alice\n  recipee: x"), 1), 0o644))
	out, err := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec",
		"--load-restrictor", "LoadRestrictionsNone", dir).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), `unknown field "spec.recipee"`)
}

// TestKptRender runs kpt fn render when a kpt binary is available
// (NRL_KPT, else kpt on PATH; hack/tools.sh does not install one). The
// Kptfile's container function is swapped for the exec form, since there
// is no container runtime here; the fixture testdata/kpt-package pins the
// same behaviour without kpt.
func TestKptRender(t *testing.T) {
	kpt := kptBinary(t)
	dir := exampleTree(t, "kpt")
	bin, err := filepath.Abs(filepath.Join(dir, "../../bin/nrl-k8s"))
	require.NoError(t, err)
	useExecFunction(t, dir, bin+" fn")

	for i := 0; i < 2; i++ { // the second render must change nothing
		out, err := exec.Command(kpt, "fn", "render", "--allow-exec", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	var got bytes.Buffer
	for _, f := range []string{
		"computedomain_compute-domain-qwen3-30b-math-gb300-training.yaml",
		"rayjob_qwen3-30b-math-gb300.yaml",
		"resourceclaimtemplate_roce-qwen3-30b-math-gb300-training.yaml",
	} {
		b, err := os.ReadFile(filepath.Join(dir, "qwen3-30b-math-gb300", f))
		require.NoError(t, err)
		got.WriteString("---\n")
		got.Write(b)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "qwen3-30b-math-gb300"))
	require.NoError(t, err)
	require.Len(t, entries, 3)
	cmd := exec.Command(clirun.Binary(t), "render", "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
		"--infra", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml", "--user", "alice", "-n", "default",
		"--name", "qwen3-30b-math-gb300")
	cmd.Dir = repoRoot
	want, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, string(want), got.String(), "kpt writes nrl-k8s render's documents, one file each")
	for _, f := range []string{"Kptfile", "run.yaml", "inputs/nrl-recipes.yaml"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, "kpt fn render must keep the package's inputs")
	}
}

// TestKustomizeCLIIdentity builds examples/kustomize-identity: namespace,
// namePrefix and labels on the kustomization that runs the function change
// the NemoRLRun items, whose metadata is the runs' identity.
func TestKustomizeCLIIdentity(t *testing.T) {
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set")
	}
	dir := exampleTree(t, "kustomize-identity")
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec",
		"--load-restrictor", "LoadRestrictionsNone", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	objs := splitObjects(t, got)
	require.Len(t, objs, 7, "sweep-a (rayjob: 3 objects) and sweep-b (raycluster: 4)")
	for _, o := range objs {
		require.Equal(t, "ml-prod", o.Namespace, o.ID())
		require.Contains(t, o.Name, "exp1-sweep-", o.ID())
		require.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
		require.Contains(t, []string{"exp1-sweep-a", "exp1-sweep-b"}, o.Labels["app.kubernetes.io/instance"], o.ID())
		for path, labels := range runcheck.PodTemplates(o) {
			require.Equal(t, o.Labels["app.kubernetes.io/instance"], labels["app.kubernetes.io/instance"], o.ID()+path)
			require.Equal(t, "rl-42", labels["cost-center"], o.ID()+path)
		}
	}
	requireReferencesResolve(t, objs)
}

type object = runcheck.Object

func splitObjects(t *testing.T, data []byte) []object {
	t.Helper()
	objs, err := runcheck.Parse(data)
	require.NoError(t, err)
	return objs
}

func requireReferencesResolve(t *testing.T, objs []object) {
	t.Helper()
	require.Empty(t, runcheck.Dangling(objs))
}

// kptBinary is NRL_KPT, else kpt on PATH; the test is skipped without one
// (hack/tools.sh does not install kpt), and off POSIX.
func kptBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("exec paths and PATH handling here are POSIX")
	}
	if kpt := os.Getenv("NRL_KPT"); kpt != "" {
		return kpt
	}
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("no kpt binary (set NRL_KPT)")
	}
	return kpt
}

// useExecFunction swaps the example Kptfile's container function for the
// exec form `- exec: "<command>"`: there is no container runtime here.
func useExecFunction(t *testing.T, dir, command string) {
	t.Helper()
	kptfile := filepath.Join(dir, "Kptfile")
	b, err := os.ReadFile(kptfile)
	require.NoError(t, err)
	swapped := bytes.Replace(b, []byte("- image: ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"), []byte(`- exec: "`+command+`"`), 1)
	require.NotEqual(t, string(b), string(swapped), "the example Kptfile names the function image")
	require.NoError(t, os.WriteFile(kptfile, swapped, 0o644))
}
