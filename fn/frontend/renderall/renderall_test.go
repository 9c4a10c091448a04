package renderall_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

const runYAML = `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: %NAME%
spec:
  recipe: recipe.yaml
  user: alice
`

func write(t *testing.T, file, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "runs", "b-run", "run.yaml"), strings.ReplaceAll(runYAML, "%NAME%", "b-run"))
	write(t, filepath.Join(root, "runs", "a-run", "run.yaml"), strings.ReplaceAll(runYAML, "%NAME%", "a-run"))
	write(t, filepath.Join(root, "runs", "renamed", "run.yaml"), strings.ReplaceAll(runYAML, "%NAME%", "other"))
	write(t, filepath.Join(root, "runs", "typo", "run.yaml"), strings.ReplaceAll(strings.ReplaceAll(runYAML, "%NAME%", "typo"), "user:", "usr:"))
	write(t, filepath.Join(root, "runs", "Upper", "run.yaml"), strings.ReplaceAll(runYAML, "%NAME%", "Upper"))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "runs", "empty"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "runs", ".hidden"), 0o755))
	write(t, filepath.Join(root, "runs", "README.md"), "not a run")

	runs, err := renderall.Discover(source.Disk{}, root)
	require.NoError(t, err)
	byName := map[string]renderall.RunEntry{}
	var names []string
	for _, r := range runs {
		byName[r.Name] = r
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"Upper", "a-run", "b-run", "empty", "renamed", "typo"}, names)

	cases := []struct {
		run  string
		want string // "" = valid
	}{
		{"a-run", ""},
		{"b-run", ""},
		{"renamed", `runs/renamed/run.yaml: metadata.name: found "other"; expected "renamed"`},
		{"typo", `runs/typo/run.yaml: line 7: unknown field "spec.usr"`},
		{"Upper", `run directory name "Upper"`},
		{"empty", "runs/empty/run.yaml: not found; expected every directory under runs/ to hold a NemoRLRun run.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.run, func(t *testing.T) {
			r := byName[tc.run]
			if tc.want == "" {
				assert.Empty(t, r.Diags)
				require.NotNil(t, r.Spec)
				assert.Equal(t, filepath.ToSlash(filepath.Join(root, "runs", tc.run, "run.yaml")), r.Path)
				return
			}
			assert.Nil(t, r.Spec)
			require.Len(t, r.Diags, 1)
			assert.Contains(t, r.Diags[0].String(), tc.want)
		})
	}

	_, err = renderall.Discover(source.Disk{}, filepath.Join(root, "runs", "a-run"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runs: not found; expected a runs repository with runs/<run>/run.yaml files")
}

func TestCompare(t *testing.T) {
	const gone = "metadata: {labels: {app.kubernetes.io/managed-by: nrl-k8s}}\n"
	res := &renderall.Result{
		Runs:  []string{"broken", "same", "stale", "new"},
		Files: map[string][]byte{"same": []byte("a\n"), "stale": []byte("a\nB\nc\n"), "new": []byte("x\n")},
	}
	committed := map[string][]byte{
		"same": []byte("a\n"), "stale": []byte("a\nb\nc\n"),
		"gone": []byte(gone), "broken": []byte("kept\n"), "foreign": []byte("kind: X\n"),
	}
	drift := renderall.Compare("manifests", committed, res)
	require.Len(t, drift, 3, "same is current; broken failed, so its file is neither stale nor an orphan; foreign was not written by render-all")
	require.Equal(t, []string{"foreign"}, renderall.Foreign(committed, res))
	cases := []struct {
		run    string
		change renderall.Change
		data   string
		diff   string
	}{
		{"gone", renderall.Orphan, "", "--- a/manifests/gone.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-" + gone},
		{"new", renderall.Missing, "x\n", "--- /dev/null\n+++ b/manifests/new.yaml\n@@ -0,0 +1 @@\n+x\n"},
		{"stale", renderall.Stale, "a\nB\nc\n", "--- a/manifests/stale.yaml\n+++ b/manifests/stale.yaml\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
	}
	for i, tc := range cases {
		t.Run(tc.run, func(t *testing.T) {
			d := drift[i]
			assert.Equal(t, tc.run, d.Run)
			assert.Equal(t, tc.change, d.Change)
			assert.Equal(t, "manifests/"+tc.run+".yaml", d.File)
			assert.Equal(t, tc.data, string(d.Data))
			assert.Equal(t, tc.diff, d.Diff)
		})
	}
	assert.Equal(t, []string{"broken"}, res.Failed())
}

func TestLines(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a\n", []string{"a\n"}},
		{"a\nb", []string{"a\n", "b\n"}},
		{"\n\n", []string{"\n", "\n"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, renderall.Lines(tc.in), "%q", tc.in)
	}
}

// fixture copies examples/runs-repo with the recipes and GB300 profiles
// it references into a temp dir, keeping the relative layout so the run
// files' ../../../../ paths resolve to the copies. It returns the temp root
// and the copied runs repository.
func fixture(t *testing.T) (string, string) {
	t.Helper()
	root := testenv.RepoRoot(t)
	tmp := t.TempDir()
	for _, dir := range []string{"examples/runs-repo", "recipes", "profiles/gb300"} {
		src := filepath.Join(root, dir)
		require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			target := filepath.Join(tmp, dir, rel)
			if d.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}))
	}
	// A checkout: render-all reads only inside the git work tree, and names
	// files relative to it (so `git apply` of --check's diff works there).
	testenv.GitCheckout(t, tmp)
	return tmp, filepath.Join(tmp, "examples", "runs-repo")
}

// TestGoldenRunsRepo is the PR workflow on the committed example: the
// committed manifests are current; a one-line profile change makes --check
// fail with a unified diff of exactly that run; render-all rewrites only
// that run's file; diff of the two trees reports the cost.
func TestGoldenRunsRepo(t *testing.T) {
	tmp, repo := fixture(t)
	manifests := filepath.Join(repo, "manifests")

	code, stdout, stderr := clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitOK, code, "committed examples/runs-repo/manifests are stale; run `make manifests`\n%s%s", stdout, stderr)
	assert.Empty(t, stdout)

	// Every file is exactly what `nrl-k8s render` prints for that run.
	code, rendered, stderr := clirun.Run("render",
		filepath.Join(tmp, "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml"),
		"--infra", filepath.Join(tmp, "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"),
		"--user", "alice", "--mode", "raycluster", "-n", "rl-team", "--name", "ultra-64n", "--no-deployments")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Equal(t, testenv.ReadFile(t, filepath.Join(manifests, "ultra-64n.yaml")), rendered)

	before := t.TempDir()
	snapshot := map[string]string{}
	past := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []string{"qwen3-math-4n", "ultra-48n", "ultra-64n", "ultra-tools"} {
		f := filepath.Join(manifests, n+".yaml")
		snapshot[n] = testenv.ReadFile(t, f)
		write(t, filepath.Join(before, n+".yaml"), snapshot[n])
		require.NoError(t, os.Chtimes(f, past, past))
	}

	// The one-line change: the 64-node ultra run grows to 80 nodes.
	profile := filepath.Join(tmp, "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml")
	data := testenv.ReadFile(t, profile)
	require.Equal(t, 1, strings.Count(data, "\n          replicas: 64\n"))
	write(t, profile, strings.Replace(data, "\n          replicas: 64\n", "\n          replicas: 80\n", 1))

	code, stdout, stderr = clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitError, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "--- a/examples/runs-repo/manifests/ultra-64n.yaml\n+++ b/examples/runs-repo/manifests/ultra-64n.yaml\n@@ "), stdout)
	assert.Equal(t, 1, strings.Count(stdout, "\n+++ "), "only the changed run drifts")
	assert.Contains(t, stdout, "\n+  - groupName: gpu-workers-segment-4\n")
	assert.Contains(t, stderr, "manifests/ultra-64n.yaml: stale (differs from the render)")
	assert.Contains(t, stderr, "1 of 4 manifest(s) out of date: run `nrl-k8s render-all "+filepath.ToSlash(repo)+"` (or `make manifests`)")
	assert.Contains(t, stderr, "ultra-64n: warning: ")
	assert.Contains(t, stderr, "the training cluster provides 80 GPU nodes")
	// The re-run line repeats the flags that change what is read or written.
	_, _, stderr = clirun.Run("render-all", repo, "--check", "--out", manifests, "--root", tmp)
	assert.Contains(t, stderr, "run `nrl-k8s render-all "+filepath.ToSlash(repo)+" --out "+filepath.ToSlash(manifests)+" --root "+filepath.ToSlash(tmp)+"`")
	for n, want := range snapshot {
		assert.Equal(t, want, testenv.ReadFile(t, filepath.Join(manifests, n+".yaml")), "--check wrote %s", n)
	}

	code, stdout, stderr = clirun.Run("render-all", repo)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Equal(t, "wrote examples/runs-repo/manifests/ultra-64n.yaml\n4 run(s): 4 rendered, 1 changed, 0 failed\n", stdout)
	for _, n := range []string{"qwen3-math-4n", "ultra-48n", "ultra-tools"} {
		st, err := os.Stat(filepath.Join(manifests, n+".yaml"))
		require.NoError(t, err)
		assert.True(t, st.ModTime().Equal(past), "%s was rewritten although unchanged", n)
	}
	assert.NotEqual(t, snapshot["ultra-64n"], testenv.ReadFile(t, filepath.Join(manifests, "ultra-64n.yaml")))
	code, _, stderr = clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitOK, code, stderr)

	code, stdout, stderr = clirun.Run("diff", before, manifests)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Equal(t, `ultra-64n: changed
  GPU nodes   64 → 80 (+16)
  GPUs        256 → 320 (+64)
  objects     ~ RayCluster/rl-team/ultra-64n-training
  security    pod security level privileged
              namespaces rl-team
3 runs unchanged
total: GPU nodes 116 → 132 (+16), GPUs 464 → 528 (+64)
`, stdout)

	// Two files compare as one run, whatever their names.
	code, stdout, _ = clirun.Run("diff", filepath.Join(before, "ultra-64n.yaml"), filepath.Join(manifests, "ultra-64n.yaml"), "--output", "markdown")
	require.Equal(t, cli.ExitOK, code)
	assert.Contains(t, stdout, "| GPU nodes | 64 | 80 (+16) |\n| GPUs | 256 | 320 (+64) |\n")
}

func TestRenderAllOrphansAndFailures(t *testing.T) {
	tmp, repo := fixture(t)
	manifests := filepath.Join(repo, "manifests")
	write(t, filepath.Join(manifests, "retired.yaml"), "kind: RayJob\nmetadata:\n  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n")
	write(t, filepath.Join(manifests, "README.md"), "not ours")
	write(t, filepath.Join(manifests, "notes.yaml"), "kind: RayJob\n")
	// An overlay's entry point beside the renders is the user's, not a run.
	write(t, filepath.Join(manifests, "kustomization.yaml"), "resources: [ultra-48n.yaml]\n")
	broken := strings.Replace(testenv.ReadFile(t, filepath.Join(repo, "runs/ultra-48n/run.yaml")), "ultra-48n", "broken", 1)
	write(t, filepath.Join(repo, "runs/broken/run.yaml"), strings.Replace(broken, "ultra_48n_pipeclean", "no_such", 1))
	write(t, filepath.Join(manifests, "broken.yaml"), "kept\n")
	testenv.GitAdd(t, tmp) // committed in the pull request

	code, stdout, stderr := clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitError, code)
	assert.Equal(t, "--- a/examples/runs-repo/manifests/retired.yaml\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-kind: RayJob\n-metadata:\n-  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n", stdout)
	assert.Contains(t, stderr, "manifests/retired.yaml: orphaned")
	assert.Contains(t, stderr, "manifests/notes.yaml: no run runs/notes, and not written by render-all")
	assert.Contains(t, stderr, "broken: error: ")
	assert.Contains(t, stderr, "no_such.gb300.infra.yaml")
	assert.Contains(t, stderr, "1 run(s) failed to render, their manifests were left as they are: broken")

	code, stdout, _ = clirun.Run("render-all", repo)
	require.Equal(t, cli.ExitError, code, "a failed run fails the command")
	assert.Contains(t, stdout, "removed examples/runs-repo/manifests/retired.yaml (no run runs/retired)\n")
	assert.Contains(t, stdout, "5 run(s): 4 rendered, 0 changed, 1 failed\n")
	assert.NoFileExists(t, filepath.Join(manifests, "retired.yaml"))
	assert.Equal(t, "kept\n", testenv.ReadFile(t, filepath.Join(manifests, "broken.yaml")))
	assert.FileExists(t, filepath.Join(manifests, "README.md"))
	assert.FileExists(t, filepath.Join(manifests, "notes.yaml"), "only files render-all wrote are deleted")
	assert.FileExists(t, filepath.Join(manifests, "kustomization.yaml"))
	assert.NotContains(t, stdout+stderr, "kustomization", "an overlay's kustomization.yaml is neither a run nor reported")

	// diff of a tree skips it too.
	overlay := filepath.Join(tmp, "overlay")
	write(t, filepath.Join(overlay, "a.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write(t, filepath.Join(overlay, "kustomization.yaml"), "resources: [a.yaml]\n")
	code, stdout, stderr = clirun.Run("diff", overlay, overlay)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.NotContains(t, stdout+stderr, "kind and metadata.name are required")
	assert.NotContains(t, stdout+stderr, "kustomization")
}

// render-all writes every run's manifest to --out; a folder with no runs,
// and diff's missing, colliding or malformed sides, are errors naming what
// failed (flag and argument refusals are fn/frontend/cli's twins').
func TestRenderAllUsage(t *testing.T) {
	_, repo := fixture(t)
	out := filepath.Join(t.TempDir(), "rendered")
	code, stdout, stderr := clirun.Run("render-all", repo, "--out", out)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "wrote "+filepath.ToSlash(out)+"/qwen3-math-4n.yaml\n")
	assert.FileExists(t, filepath.Join(out, "ultra-48n.yaml"))

	code, _, stderr = clirun.Run("render-all", filepath.Join(repo, "runs"))
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "runs/runs: not found")
	manifests := filepath.Join(repo, "manifests")
	code, _, stderr = clirun.Run("diff", manifests, filepath.Join(repo, "nope"))
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "nope")
	code, _, stderr = clirun.Run("diff", manifests, filepath.Join(repo, "runs"))
	assert.Equal(t, cli.ExitError, code, "every run.yaml would be run \"run\"")
	assert.Contains(t, stderr, `run "run" is also`)
	write(t, filepath.Join(manifests, "bad.yaml"), "kind: [\n")
	code, _, stderr = clirun.Run("diff", manifests, manifests)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "manifests/bad.yaml: document 1")
}

// Runs render on every core; what Render returns (files, findings, order)
// is the same with one worker as with several, failures included.
func TestRenderDoesNotDependOnWorkers(t *testing.T) {
	_, repo := fixture(t)
	broken := strings.Replace(testenv.ReadFile(t, filepath.Join(repo, "runs/ultra-48n/run.yaml")), "ultra-48n", "broken", 1)
	write(t, filepath.Join(repo, "runs/broken/run.yaml"), strings.Replace(broken, "ultra_48n_pipeclean", "no_such", 1))
	runs, err := renderall.Discover(source.Disk{}, repo)
	require.NoError(t, err)
	renderWith := func(procs int) *renderall.Result {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return renderall.Render(source.Disk{}, runs)
	}
	one := renderWith(1)
	require.Equal(t, []string{"broken"}, one.Failed())
	require.Len(t, one.Files, 4)
	require.NotEmpty(t, one.Diags["broken"])
	for _, procs := range []int{2, 4} {
		require.Equal(t, one, renderWith(procs), "GOMAXPROCS=%d", procs)
	}
}

// TestRenderAllKustomization: --kustomization keeps manifests/kustomization.yaml
// listing every run's manifest, so an overlay over manifests/ takes a new
// run without a hand edit; --check calls a stale one drift.
func TestRenderAllKustomization(t *testing.T) {
	tmp, repo := fixture(t)
	manifests := filepath.Join(repo, "manifests")
	require.NoError(t, os.Remove(filepath.Join(manifests, "kustomization.yaml")))
	code, stdout, stderr := clirun.Run("render-all", repo, "--kustomization")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "wrote examples/runs-repo/manifests/kustomization.yaml\n")
	k := testenv.ReadFile(t, filepath.Join(manifests, "kustomization.yaml"))
	assert.Contains(t, k, "kind: Kustomization\nresources:\n- qwen3-math-4n.yaml\n- ultra-48n.yaml\n- ultra-64n.yaml\n- ultra-tools.yaml\n")
	testenv.GitAdd(t, tmp)
	// kustomize itself builds it: every run's objects.
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), manifests)
	require.NoError(t, err)
	clusters := 0
	for _, r := range m.Resources() {
		if r.GetKind() == "RayCluster" || (r.GetKind() == "RayJob" && !strings.Contains(r.MustYaml(), "clusterSelector")) {
			clusters++
		}
	}
	assert.GreaterOrEqual(t, clusters, 2, "the clusters of the two runs (a RayCluster, or a RayJob that creates one)")

	code, stdout, stderr = clirun.Run("render-all", repo, "--check", "--kustomization")
	assert.Equal(t, cli.ExitOK, code, stdout+stderr)

	// A new run: its manifest and its line in the kustomization are drift.
	run := strings.ReplaceAll(testenv.ReadFile(t, filepath.Join(repo, "runs/qwen3-math-4n/run.yaml")), "qwen3-math-4n", "qwen3-math-4n-b")
	write(t, filepath.Join(repo, "runs/qwen3-math-4n-b/run.yaml"), run)
	testenv.GitAdd(t, tmp)
	code, stdout, stderr = clirun.Run("render-all", repo, "--check", "--kustomization")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stdout, "+- qwen3-math-4n-b.yaml\n")
	assert.Contains(t, stderr, "manifests/kustomization.yaml: out of date")

	code, _, stderr = clirun.Run("render-all", repo, "--kustomization")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, testenv.ReadFile(t, filepath.Join(manifests, "kustomization.yaml")), "- qwen3-math-4n-b.yaml\n")

	// Two runs that both render the profile's shared services hold one
	// object kustomize would be given twice: refused, nothing written,
	// with what to change.
	for _, r := range []string{"ultra-48n", "ultra-64n"} {
		f := filepath.Join(repo, "runs", r, "run.yaml")
		write(t, f, strings.Replace(testenv.ReadFile(t, f), "noDeployments: true", "noDeployments: false", 1))
	}
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs", "ultra-tools")))
	testenv.GitAdd(t, tmp)
	before := testenv.ReadFile(t, filepath.Join(manifests, "kustomization.yaml"))
	code, _, stderr = clirun.Run("render-all", repo, "--kustomization")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "manifests/kustomization.yaml: Deployment.apps rl-team/alice-ultra-pipeclean-ns-tools is in the manifests of runs ultra-48n, ultra-64n; kustomize refuses a resource listed twice")
	assert.Contains(t, stderr, "expected one run owning the profile's shared deployments (spec.onlyDeployments: true) and spec.noDeployments: true in the others")
	assert.Equal(t, before, testenv.ReadFile(t, filepath.Join(manifests, "kustomization.yaml")), "not rewritten")
}
