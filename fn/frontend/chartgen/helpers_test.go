package chartgen_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

const (
	chartDir  = "charts/nemo-rl-run"
	indexFile = "profiles/index.yaml"
)

// Tests run from the repository root: the index, the chart and the
// recorded paths are all relative to it.
var chdirOnce sync.Once

func atRoot(t testing.TB) {
	t.Helper()
	chdirOnce.Do(func() {
		require.NoError(t, os.Chdir("../../.."))
	})
}

func index(t testing.TB) *chartgen.Index {
	t.Helper()
	atRoot(t)
	idx, err := chartgen.LoadIndex(indexFile)
	require.NoError(t, err)
	return idx
}

var (
	chartOnce sync.Once
	chartObj  *chart.Chart
	chartErr  error
)

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	atRoot(t)
	chartOnce.Do(func() { chartObj, chartErr = loader.Load(chartDir) })
	require.NoError(t, chartErr)
	return chartObj
}

// run is one set of chart values / render parameters.
type run struct {
	profile   string
	mode      runparams.Mode
	user      string
	namespace string // the release namespace; the chart's namespace value stays empty
	runID     string
	overrides []string
	recipe    string // file for the recipe value, as it is
	ships     string // a recipe the run ships: the engine renders it under chartgen.RecipeVariant, the chart gets it merged (nrl-k8s recipe-merge)
	release   string // the release name ("my-run" when empty)
	image     string
	labels    map[string]string
	annos     map[string]string
	// knobs are per-run chart values (queue, env, ...); infra the
	// nrl-k8s render infra overrides the test says they mean.
	knobs map[string]any
	infra []string
	// state is the chart's state value and nrl-k8s render --state ("": run).
	state runparams.State
}

func (r run) releaseName() string {
	if r.release == "" {
		return "my-run"
	}
	return r.release
}

func (r run) values(t testing.TB) map[string]any {
	v := map[string]any{"profile": r.profile, "user": r.user, "mode": string(r.mode)}
	if r.runID != "" {
		v["runId"] = r.runID
	}
	if r.state != "" {
		v["state"] = string(r.state)
	}
	if len(r.overrides) > 0 {
		ovs := make([]any, len(r.overrides))
		for i, o := range r.overrides {
			ovs[i] = o
		}
		v["overrides"] = ovs
	}
	if r.recipe != "" {
		b, err := os.ReadFile(r.recipe)
		require.NoError(t, err)
		v["recipe"] = string(b)
	}
	if r.ships != "" {
		v["recipe"] = mergedRecipe(t, r.ships)
	}
	if r.image != "" {
		v["image"] = r.image
	}
	for k, val := range r.knobs {
		v[k] = val
	}
	for key, m := range map[string]map[string]string{"labels": r.labels, "annotations": r.annos} {
		if len(m) > 0 {
			mm := map[string]any{}
			for k, val := range m {
				mm[k] = val
			}
			v[key] = mm
		}
	}
	return v
}

func (r run) String() string {
	s := fmt.Sprintf("%s/%s/runid=%q/overrides=%d", r.profile, r.mode, r.runID, len(r.overrides))
	if r.state != "" {
		s += "/state=" + string(r.state)
	}
	return s
}

// helmTemplate is `helm template my-run CHART -n NS` in process, as
// helm v3's action.Install (DryRun, ClientOnly) does it: values coalesced
// and checked against the schema, templates rendered, NOTES.txt set aside,
// manifests sorted in install order and framed with `# Source:` lines.
// TestRealHelm holds it to the real CLIs.
func helmTemplate(c *chart.Chart, vals map[string]any, ns string) (manifest, notes string, err error) {
	return helmTemplateNamed(c, "my-run", vals, ns)
}

func helmTemplateNamed(c *chart.Chart, release string, vals map[string]any, ns string) (manifest, notes string, err error) {
	// As helm template --kube-version 1.34.0: the first release serving
	// resource.k8s.io/v1, which the DRA profiles need (the library's
	// default is 1.20).
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.34.0", Major: "1", Minor: "34"}
	return helmTemplateCaps(c, release, vals, ns, &caps)
}

func helmTemplateCaps(c *chart.Chart, release string, vals map[string]any, ns string, caps *chartutil.Capabilities) (manifest, notes string, err error) {
	opts := chartutil.ReleaseOptions{Name: release, Namespace: ns, Revision: 1, IsInstall: true}
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return "", "", err
	}
	rv, err := chartutil.ToRenderValues(c, vals, opts, caps)
	if err != nil {
		return "", "", err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return "", "", err
	}
	for k, v := range files {
		if strings.HasSuffix(k, "/NOTES.txt") {
			notes = v
			delete(files, k)
		}
	}
	_, ms, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return b.String(), notes, nil
}

// stripSource removes helm template's `# Source:` lines: what is left is
// the stream nrl-k8s render writes.
func stripSource(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "# Source: ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func entry(t *testing.T, name string) chartgen.Entry {
	t.Helper()
	for _, e := range index(t).Profiles {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("profile %s is not in %s", name, indexFile)
	return chartgen.Entry{}
}

// engineRender is `nrl-k8s render RECIPE --infra PROFILE ...` for a run:
// the pipeline, then emit.Stream. ok is false when the engine reports an
// error (msg holds the findings). A run's render is worked out once per
// test binary: the in-process parity tests and each Helm CLI compare
// against the same cells, and the engine's own determinism is held by its
// golden tests, not here.
func engineRender(t *testing.T, r run) (out string, msg string, ok bool) {
	t.Helper()
	key := fmt.Sprintf("%#v", r) // fmt prints maps sorted: one key per run
	renders.Lock()
	got, done := renders.m[key]
	renders.Unlock()
	if done {
		return got.out, got.msg, got.ok
	}
	out, msg, ok = renderRun(t, r)
	renders.Lock()
	renders.m[key] = rendered{out, msg, ok}
	renders.Unlock()
	return out, msg, ok
}

type rendered struct {
	out, msg string
	ok       bool
}

var renders = struct {
	sync.Mutex
	m map[string]rendered
}{m: map[string]rendered{}}

func renderRun(t *testing.T, r run) (out string, msg string, ok bool) {
	t.Helper()
	e := entry(t, r.profile)
	// The chart's run: named after the release, labelled with the chart.
	labels := map[string]string{"helm.sh/chart": chartLabel, "app.kubernetes.io/name": "nemo-rl-run", "app.kubernetes.io/version": "v0.1.0",
		"app.kubernetes.io/managed-by": chartgen.ChartManagedBy}
	for k, v := range r.labels {
		labels[k] = v
	}
	rec, ovs := e.Recipe, append(append([]string(nil), r.infra...), r.overrides...)
	if r.ships != "" {
		rec, ovs = r.ships, append([]string{chartgen.RecipeVariant}, ovs...)
	}
	// A run release leaves the profile's shared services out; a services
	// release is nothing else (chartgen.ServicesMode).
	mode, services := r.mode, r.mode == servicesMode
	if services {
		mode = runparams.RayJob
	}
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe:    rec,
		Profile:   e.Profile,
		Namespace: r.namespace,
		Overrides: ovs,
		Run: runparams.Run{
			Mode:            mode,
			User:            r.user,
			RunID:           r.runID,
			Name:            r.releaseName(),
			Image:           r.image,
			Labels:          labels,
			Annotations:     r.annos,
			NoDeployments:   !services,
			OnlyDeployments: services,
			State:           r.state,
		},
	})
	var msgs []string
	for _, d := range res.Diags.Sorted() {
		msgs = append(msgs, d.String())
	}
	if res.Diags.HasErrors() {
		return "", strings.Join(msgs, "\n"), false
	}
	b, err := emit.Stream(res.Docs)
	require.NoError(t, err)
	return string(b), strings.Join(msgs, "\n"), true
}

// helmCLIs are the pinned helm binaries (hack/tools.sh; `make test` exports
// them). Without them the CLI tests skip locally and fail in CI.
func helmCLIs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, env := range []string{"NRL_HELM3", "NRL_HELM4"} {
		if p := os.Getenv(env); p != "" {
			abs, err := filepath.Abs(p)
			require.NoError(t, err)
			out[env] = abs
		}
	}
	if len(out) < 2 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("NRL_HELM3 and NRL_HELM4 must be set in CI (eval \"$(hack/tools.sh)\")")
		}
		t.Skip("NRL_HELM3 / NRL_HELM4 not set (run `make test`, or eval \"$(hack/tools.sh)\")")
	}
	return out
}

func helmCmd(t *testing.T, bin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// No kube config, cache or plugins of the machine's user leak in.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// cliArgs turns a run into helm template flags; overrides go through a
// values file (--set splits on commas).
func cliArgs(t *testing.T, r run) []string {
	args := []string{"template", r.releaseName(), chartDir, "--kube-version", "1.34.0", "-n", r.namespace, "--set", "profile=" + r.profile, "--set", "user=" + r.user, "--set", "mode=" + string(r.mode)}
	if r.runID != "" {
		args = append(args, "--set", "runId="+r.runID)
	}
	if r.state != "" {
		args = append(args, "--set", "state="+string(r.state))
	}
	if len(r.overrides) > 0 {
		f := filepath.Join(t.TempDir(), "overrides.yaml")
		var b strings.Builder
		b.WriteString("overrides:\n")
		for _, o := range r.overrides {
			fmt.Fprintf(&b, "  - %q\n", o)
		}
		require.NoError(t, os.WriteFile(f, []byte(b.String()), 0o644))
		args = append(args, "-f", f)
	}
	if r.recipe != "" {
		args = append(args, "--set-file", "recipe="+r.recipe)
	}
	if r.ships != "" {
		f := filepath.Join(t.TempDir(), "merged.yaml")
		require.NoError(t, os.WriteFile(f, []byte(mergedRecipe(t, r.ships)), 0o644))
		args = append(args, "--set-file", "recipe="+f)
	}
	if r.image != "" {
		args = append(args, "--set", "image="+r.image)
	}
	if len(r.knobs) > 0 {
		// JSON is YAML: a values file keeps types and dotted keys as they are.
		b, err := json.Marshal(r.knobs)
		require.NoError(t, err)
		f := filepath.Join(t.TempDir(), "knobs.yaml")
		require.NoError(t, os.WriteFile(f, b, 0o644))
		args = append(args, "-f", f)
	}
	for _, k := range tree.SortedKeys(r.labels) {
		args = append(args, "--set-string", "labels."+strings.ReplaceAll(k, ".", `\.`)+"="+r.labels[k])
	}
	for _, k := range tree.SortedKeys(r.annos) {
		args = append(args, "--set-string", "annotations."+strings.ReplaceAll(k, ".", `\.`)+"="+r.annos[k])
	}
	return args
}

// servicesMode is the chart's mode=services as a run's mode.
const servicesMode = runparams.Mode(chartgen.ServicesMode)

// chartLabel is the helm.sh/chart label the chart adds.
const chartLabel = "nemo-rl-run-0.1.0"

// mergedRecipe is what `nrl-k8s recipe-merge FILE` prints: the text the
// chart's recipe value takes.
func mergedRecipe(t testing.TB, file string) string {
	t.Helper()
	y, err := chartgen.MergedRecipe("", file)
	require.NoError(t, err)
	return y
}
