package chartgen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

func readMeta(t *testing.T) *chartgen.Meta {
	t.Helper()
	atRoot(t)
	b, err := os.ReadFile(filepath.Join(chartDir, chartgen.MetaFile))
	require.NoError(t, err)
	var m chartgen.Meta
	require.NoError(t, json.Unmarshal(b, &m))
	return &m
}

// TestRealHelm: the pinned Helm 3 and Helm 4 CLIs lint the chart clean and
// template every packaged run to nrl-k8s render's bytes; bad values fail.
func TestRealHelm(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	for env, bin := range clis {
		t.Run(env, func(t *testing.T) {
			t.Run("lint", func(t *testing.T) { helmLintsClean(t, bin) })
			t.Run("template", func(t *testing.T) { helmTemplatesLikeRender(t, bin) })
			t.Run("bad values", func(t *testing.T) {
				for _, tc := range []struct {
					args []string
					want string
				}{
					{[]string{"--set", "profile=nope", "--set", "user=a"}, "at '/profile': value must be one of"},
					{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "mode=batch"}, "at '/mode'"},
					{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=Bob_Smith"}, "at '/user'"},
					{[]string{"--set", "profile=gb300-qwen3-30b-math-4n-4gpu"}, "the user value is required"},
				} {
					_, errOut, err := helmCmd(t, bin, append([]string{"template", "r", chartDir, "--kube-version", "1.34.0"}, tc.args...)...)
					require.Error(t, err, tc.args)
					assert.Contains(t, errOut, tc.want)
				}
			})
			t.Run("new values", func(t *testing.T) {
				services := 0
				for _, r := range cliSample(t, newValueRuns(t)) {
					if r.mode == servicesMode {
						services++
					}
					want, msg, ok := engineRender(t, r)
					require.True(t, ok, msg)
					out, errOut, err := helmCmd(t, bin, cliArgs(t, r)...)
					require.NoError(t, err, "%s: %s", r, errOut)
					assert.Equal(t, want, stripSource(out), r.String())
				}
				assert.Positive(t, services, "shared services releases")
			})
			t.Run("two releases", func(t *testing.T) {
				const image = "registry.example/nemo-rl:sweep-1"
				for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
					sets := map[string][]runcheck.Object{}
					for _, rel := range []string{"run-a", "run-b"} {
						r := run{profile: "gb300-qwen3-30b-math-4n-4gpu", mode: mode, user: "alice", namespace: "team-a", release: rel, image: image}
						out, errOut, err := helmCmd(t, bin, cliArgs(t, r)...)
						require.NoError(t, err, errOut)
						objs, err := runcheck.Parse([]byte(out))
						require.NoError(t, err)
						requireWholeRun(t, objs, rel, image)
						sets[rel] = objs
					}
					requireDisjoint(t, sets["run-a"], sets["run-b"])
				}
			})
			t.Run("subchart", func(t *testing.T) {
				// An umbrella chart depending on this one: Helm passes
				// global to every subchart, so the schema must accept it.
				dir := t.TempDir()
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "charts"), 0o755))
				_, _, err := chartgen.Package(chartDir, filepath.Join(dir, "charts"))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n- name: nemo-rl-run\n  version: 0.1.0\n"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "values.yaml"), []byte("global:\n  team: rl\nnemo-rl-run:\n  profile: generic-single-node-8gpu\n  user: ann\n"), 0o644))
				out, errOut, err := helmCmd(t, bin, "template", "sweep-1", dir, "-n", "team-a")
				require.NoError(t, err, errOut)
				want, msg, ok := engineRender(t, run{profile: "generic-single-node-8gpu", mode: runparams.RayJob, user: "ann", namespace: "team-a", release: "sweep-1"})
				require.True(t, ok, msg)
				assert.Equal(t, want, stripSource(out))
			})
			t.Run("packaged archive", func(t *testing.T) {
				dir := t.TempDir()
				file, _, err := chartgen.Package(chartDir, dir)
				require.NoError(t, err)
				r := run{profile: "gb300-ultra-64n-pipeclean", mode: runparams.RayCluster, user: "alice", namespace: "team-a", runID: "exp-7", overrides: twoOverrides}
				args := cliArgs(t, r)
				args[2] = file
				out, errOut, err := helmCmd(t, bin, args...)
				require.NoError(t, err, errOut)
				want, _, _ := engineRender(t, r)
				assert.Equal(t, want, stripSource(out))
			})
			t.Run("helm package", func(t *testing.T) {
				// Measured, not asserted: whether the CLI's own archive is stable.
				sums := make([]string, 2)
				for i := range sums {
					dir := t.TempDir()
					_, errOut, err := helmCmd(t, bin, "package", chartDir, "-d", dir)
					require.NoError(t, err, errOut)
					b, err := os.ReadFile(filepath.Join(dir, "nemo-rl-run-0.1.0.tgz"))
					require.NoError(t, err)
					s := sha256.Sum256(b)
					sums[i] = hex.EncodeToString(s[:])
					if i == 0 {
						time.Sleep(1100 * time.Millisecond) // tar times have one-second resolution
					}
				}
				t.Logf("%s helm package twice: %s %s (stable: %v)", env, sums[0], sums[1], sums[0] == sums[1])
			})
		})
	}
}

// helmLintsClean: helm lint --strict passes the chart for every profile and
// every ci/ values file, with no remark but the missing icon.
func helmLintsClean(t *testing.T, bin string) {
	lintArgs := [][]string{{"lint", chartDir}}
	for _, e := range index(t).Profiles {
		lintArgs = append(lintArgs, []string{"lint", chartDir, "--strict", "--kube-version", "1.34.0", "--set", "profile=" + e.Name, "--set", "user=alice"})
	}
	ci, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, ci, "the chart's ci/ values files")
	for _, f := range ci {
		lintArgs = append(lintArgs, []string{"lint", chartDir, "--strict", "--kube-version", "1.34.0", "-f", f})
	}
	for _, args := range lintArgs {
		out, errOut, err := helmCmd(t, bin, args...)
		require.NoError(t, err, "%v\n%s%s", args, out, errOut)
		assert.Contains(t, out, "1 chart(s) linted, 0 chart(s) failed")
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "[") {
				// Helm's only remark: the chart has no icon (nothing to show).
				assert.Equal(t, "[INFO] Chart.yaml: icon is recommended", l, args)
			}
		}
	}
}

// helmTemplatesLikeRender: helm template prints nrl-k8s render's bytes for
// a sample of the matrix (cliSample). The shared services releases (nrl-k8s
// render --only-deployments) are "new values" runs.
func helmTemplatesLikeRender(t *testing.T, bin string) {
	for _, r := range cliSample(t, matrix(t)) {
		want, msg, ok := engineRender(t, r)
		require.True(t, ok, msg)
		out, errOut, err := helmCmd(t, bin, cliArgs(t, r)...)
		require.NoError(t, err, "%s: %s", r, errOut)
		assert.Equal(t, want, stripSource(out), r.String())
	}
}

// cliSample is what of runs (matrix or newValueRuns: the variants of one
// profile and mode next to each other) the Helm CLIs template: every
// shared services release, and of the other runs one variant per profile
// and mode, turning with them, so that each mode meets every variant and
// each profile several. Every cell is held to the engine's bytes in
// process, by Helm 3's own library (TestParityInProcess,
// TestParityNewValues); what the CLIs add is their flag and values-file
// handling and Helm 4's engine, which a cell's variant exercises as well
// as the next (a CLI render costs a quarter CPU-second, mostly the
// process).
func cliSample(t *testing.T, runs []run) []run {
	t.Helper()
	var out []run
	seen := map[string]bool{}               // profile/mode
	variants := map[runparams.Mode][]bool{} // variant index seen, per mode
	g := 0
	for i := 0; i < len(runs); {
		j := i + 1
		for j < len(runs) && runs[j].profile == runs[i].profile && runs[j].mode == runs[i].mode {
			j++
		}
		if runs[i].mode == servicesMode {
			out = append(out, runs[i:j]...)
			i = j
			continue
		}
		v, m := g%(j-i), runs[i].mode
		out = append(out, runs[i+v])
		seen[runs[i].profile+"/"+string(m)] = true
		for len(variants[m]) < j-i {
			variants[m] = append(variants[m], false)
		}
		variants[m][v] = true
		g++
		i = j
	}
	// The sample's promise, checked: every profile in every mode, every
	// variant in every mode.
	for _, m := range runparams.Modes {
		for _, e := range index(t).Profiles {
			require.True(t, seen[e.Name+"/"+string(m)], "the CLI sample misses %s in %s mode", e.Name, m)
		}
		require.NotContains(t, variants[m], false, "the CLI sample misses a variant in %s mode", m)
	}
	return out
}

// TestPackageReproducible: chart-package writes the same bytes on every
// run, and helm's loader reads the archive back as the same chart.
func TestPackageReproducible(t *testing.T) {
	atRoot(t)
	var sums []string
	var data [][]byte
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		file, sum, err := chartgen.Package(chartDir, dir)
		require.NoError(t, err)
		assert.Equal(t, "nemo-rl-run-0.1.0.tgz", filepath.Base(file))
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		sums, data = append(sums, sum), append(data, b)
		if i == 0 {
			time.Sleep(1100 * time.Millisecond)
		}
	}
	require.Equal(t, sums[0], sums[1])
	t.Logf("chart-package sha256:%s (%d bytes)", sums[0], len(data[0]))

	c, err := loader.LoadArchive(bytes.NewReader(data[0]))
	require.NoError(t, err)
	dirChart := loadChart(t)
	assert.Equal(t, dirChart.Metadata, c.Metadata)
	assert.Equal(t, len(dirChart.Templates), len(c.Templates))
	assert.Equal(t, len(dirChart.Files), len(c.Files))
	r := run{profile: "gb300-qwen3-30b-math-4n-4gpu", mode: runparams.RayJob, user: "alice", namespace: "default", runID: "exp-7", overrides: twoOverrides}
	fromDir, _, err := helmTemplate(dirChart, r.values(t), "default")
	require.NoError(t, err)
	fromTgz, _, err := helmTemplate(c, r.values(t), "default")
	require.NoError(t, err)
	assert.Equal(t, fromDir, fromTgz)

	// Helm stores the whole chart in the release Secret (1 MiB at most):
	// the packaged data must stay far below that.
	assert.Less(t, len(data[0]), 256<<10, "the chart archive grows towards the release Secret's 1 MiB limit")
}
