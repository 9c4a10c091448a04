package chartgen_test

import (
	"bytes"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// teamIndex is a platform team's index in its own directory of a
// checkout, naming profiles and recipes relative to itself.
const teamIndex = `profiles:
- name: team-8gpu
  description: our 8-GPU nodes
  profile: ../profiles/generic/grpo-llama3.2-1b-instruct-1n8g.single-node-8gpu.infra.yaml
  recipe: ../recipes/examples/configs/recipes/llm/grpo-llama3.2-1b-instruct-1n8g-fsdp2tp1.v3.yaml
- name: team-gb300
  description: our GB300s
  profile: ../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml
  recipe: ../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml
`

// checkout copies the profiles and recipes of the repository, and the
// team's index, to dir: another machine's checkout at another path.
func checkout(t *testing.T, root, dir string) {
	t.Helper()
	for _, sub := range []string{"profiles", "recipes"} {
		src := filepath.Join(root, sub)
		require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		}))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "platform"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "platform", "index.yaml"), []byte(teamIndex), 0o644))
	// A checkout is a git work tree: chart-new writes inside it.
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// nrlIn runs the CLI in process with dir as the working directory.
func nrlIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	t.Chdir(dir)
	code, out, errs := clirun.Run(args...)
	require.Equal(t, 0, code, "nrl-k8s %v in %s: %s", args, dir, errs)
	return out
}

// readTree reads every file under dir, keyed by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	}))
	return out
}

var packagedRE = regexp.MustCompile(`^(\S+) sha256:([0-9a-f]{64})\n$`)

// TestNewChartReproducible: chart-new and chart-package give the same
// bytes from two checkouts at different paths, run from different working
// directories (the repository root with --index platform/index.yaml, and
// the index's own directory); the chart records the paths as the index
// writes them. The archive's mtime is pinned (helm push stamps it into the
// OCI manifest; TestChartPushDigest pushes it).
func TestNewChartReproducible(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	base := t.TempDir()
	a := filepath.Join(base, "a")
	b := filepath.Join(base, "ci-runner", "builds", "team", "checkout-b")
	checkout(t, root, a)
	checkout(t, root, b)

	nrlIn(t, a, "chart-new", "--index", "platform/index.yaml", "--out", filepath.Join(a, "chart-a"), "--name", "team-rl", "--version", "1.0.0")
	nrlIn(t, filepath.Join(b, "platform"), "chart-new", "--index", "index.yaml", "--out", "../chart-b", "--name", "team-rl", "--version", "1.0.0")
	ca, cb := readTree(t, filepath.Join(a, "chart-a")), readTree(t, filepath.Join(b, "chart-b"))
	require.Equal(t, len(ca), len(cb))
	for f, data := range ca {
		assert.Equal(t, string(data), string(cb[f]), f)
		for _, dir := range []string{a, b, base, root} {
			assert.NotContains(t, string(data), dir, "%s names a directory of the machine", f)
		}
	}
	assert.Contains(t, string(ca["README.md"]), "`../profiles/generic/grpo-llama3.2-1b-instruct-1n8g.single-node-8gpu.infra.yaml`", "paths as the index writes them")
	assert.Contains(t, string(ca["files/profiles.json"]), `"profile": "../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"`)

	outA := nrlIn(t, a, "chart-package", "chart-a", "-d", "dist-a")
	time.Sleep(1100 * time.Millisecond) // timestamps have one-second resolution
	outB := nrlIn(t, b, "chart-package", "chart-b", "-d", filepath.Join(base, "dist-b"))
	ma, mb := packagedRE.FindStringSubmatch(outA), packagedRE.FindStringSubmatch(outB)
	require.NotNil(t, ma, outA)
	require.NotNil(t, mb, outB)
	assert.Equal(t, ma[2], mb[2], "chart-package digests")
	ta, err := os.ReadFile(filepath.Join(a, ma[1]))
	require.NoError(t, err)
	tb, err := os.ReadFile(mb[1])
	require.NoError(t, err)
	assert.True(t, bytes.Equal(ta, tb), "archive bytes")
	for _, f := range []string{filepath.Join(a, ma[1]), mb[1]} {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.True(t, fi.ModTime().Equal(chartgen.Epoch), "%s mtime %v; expected %v (helm push stamps it)", f, fi.ModTime(), chartgen.Epoch)
	}

	// An absolute path in the index would put the machine into the chart.
	idx := filepath.Join(a, "platform", "abs.yaml")
	require.NoError(t, os.WriteFile(idx, []byte(strings.Replace(teamIndex, "../profiles/generic", filepath.Join(a, "profiles", "generic"), 1)), 0o644))
	t.Chdir(a)
	code, _, errs := clirun.Run("chart-new", "--index", idx, "--out", filepath.Join(a, "chart-abs"))
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "profiles[0].profile")
	assert.Contains(t, errs, "expected a path relative to the index file")
}

var digestRE = regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})$`)

// TestChartPushDigest: helm push (Helm 3 and 4) of chart-package's archive
// to an OCI registry gives the same manifest digest for archives written at
// different times: Helm takes the manifest's created annotation from the
// file's mtime, which chart-package pins. A copy with a fresh mtime gets
// another digest (what the pin is for).
func TestChartPushDigest(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	var files []string
	for i := 0; i < 2; i++ {
		file, _, err := chartgen.Package(chartDir, t.TempDir())
		require.NoError(t, err)
		files = append(files, file)
		if i == 0 {
			time.Sleep(1100 * time.Millisecond)
		}
	}
	touched := filepath.Join(t.TempDir(), filepath.Base(files[0]))
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(touched, data, 0o644))
	for env, bin := range clis {
		push := func(file, repo string) string {
			out, errOut, err := helmCmd(t, bin, "push", file, "oci://"+host+"/"+repo, "--plain-http")
			require.NoError(t, err, "%s%s", out, errOut)
			m := digestRE.FindStringSubmatch(out + errOut)
			require.NotNil(t, m, "%s%s", out, errOut)
			return m[1]
		}
		prefix := strings.ToLower(env)
		d1, d2 := push(files[0], prefix+"/one"), push(files[1], prefix+"/two")
		assert.Equal(t, d1, d2, "%s: the same chart-package archive, written a second apart", env)
		assert.NotEqual(t, d1, push(touched, prefix+"/copy"), "%s: a copy with another mtime (the control: the digest follows the mtime)", env)
		t.Logf("%s push digest %s", env, d1)
	}
}

// TestNewChartStaysInTheWorkingTree: chart-new refuses an output that
// resolves outside the working tree it runs in, directly or through a
// symlink (a directory or a parent), and writes nothing there.
func TestNewChartStaysInTheWorkingTree(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	base := t.TempDir()
	co := filepath.Join(base, "checkout")
	checkout(t, root, co)
	t.Chdir(co)
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(co, "link")))
	for _, out := range []string{filepath.Join(outside, "chart"), "link/chart", "link", "../outside/chart"} {
		code, _, stderr := clirun.Run("chart-new", "--index", "platform/index.yaml", "--out", out)
		t.Logf("%s: %s", out, stderr)
		assert.NotEqual(t, 0, code, out)
		assert.Contains(t, stderr, "refused", out)
		entries, err := os.ReadDir(outside)
		require.NoError(t, err)
		assert.Empty(t, entries, "%s: nothing written outside the working tree", out)
	}
}
