package chartgen_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

// TestNewChart: chart-new writes a chart of a team's own index that Helm
// renders as nrl-k8s render does, with the team's chart name in
// helm.sh/chart; its hand-written files are charts/nemo-rl-run's.
func TestNewChart(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	idxFile := filepath.Join(tmp, "index.yaml")
	e := entry(t, "generic-single-node-8gpu")
	require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf(
		"profiles:\n- name: team-8gpu\n  description: our 8-GPU node\n  profile: %s\n  recipe: %s\n",
		relTo(t, tmp, filepath.Join(root, e.Profile)), relTo(t, tmp, filepath.Join(root, e.Recipe)))), 0o644))
	idx, err := chartgen.LoadIndex(filepath.ToSlash(idxFile))
	require.NoError(t, err)
	dir := filepath.Join(tmp, "chart")
	m := chartgen.ChartMeta{Name: "team-rl", Version: "1.2.3", Description: "RL runs on our GB300s", Home: "https://git.example/ml/charts",
		Sources: []string{"https://git.example/ml/profiles"}, AppVersion: "2.0.0"}
	require.NoError(t, chartgen.NewChart(idx, dir, m))
	require.Error(t, chartgen.NewChart(idx, dir, m), "a non-empty directory is refused")
	for _, f := range []string{"templates/_helpers.tpl", "templates/_knobs.tpl", "templates/NOTES.txt", ".helmignore", "templates/tests/status-test-pod.yaml",
		"templates/tests/status-test-role.yaml", "templates/tests/status-test-rolebinding.yaml", "templates/tests/status-test-serviceaccount.yaml"} {
		want, err := os.ReadFile(filepath.Join(chartDir, f))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, strings.ReplaceAll(string(want), chartgen.SkeletonErrorPrefix, "team-rl: "), string(got), f)
		assert.NotContains(t, string(got), chartgen.SkeletonErrorPrefix, f)
	}
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(values), "e.g. team-8gpu")
	assert.NotContains(t, string(values), "nemo-rl-run")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "| `team-8gpu` | our 8-GPU node |")
	assert.True(t, strings.HasPrefix(string(readme), "# team-rl\n\nRL runs on our GB300s\n"))
	assert.Contains(t, string(readme), "--set profile=team-8gpu")
	assert.NotContains(t, string(readme), "../../docs")
	chartYAML, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	require.NoError(t, err)
	for _, want := range []string{"home: https://git.example/ml/charts", "- https://git.example/ml/profiles", "appVersion: 2.0.0", "description: RL runs on our GB300s"} {
		assert.Contains(t, string(chartYAML), want)
	}
	_, _, err = helmTemplateNamed(mustLoad(t, dir), "exp-1", map[string]any{"profile": "team-8gpu"}, "team-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "team-rl: the user value is required")

	c, err := loader.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "team-rl", c.Name())
	for _, mode := range runparams.Modes {
		vals := map[string]any{"profile": "team-8gpu", "user": "ann", "mode": string(mode), "image": "registry.example/x:1"}
		got, _, err := helmTemplateNamed(c, "exp-1", vals, "team-a")
		require.NoError(t, err)
		res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
			Recipe:    idx.Profiles[0].Recipe,
			Profile:   idx.Profiles[0].Profile,
			Namespace: "team-a",
			Run: runparams.Run{
				Mode:  mode,
				User:  "ann",
				Name:  "exp-1",
				Image: "registry.example/x:1",
				Labels: map[string]string{"helm.sh/chart": "team-rl-1.2.3",
					"app.kubernetes.io/name": "team-rl", "app.kubernetes.io/version": "2.0.0", "app.kubernetes.io/managed-by": chartgen.ChartManagedBy},
			},
		})
		require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
		want, err := emit.Stream(res.Docs)
		require.NoError(t, err)
		assert.Equal(t, string(want), stripSource(got), mode)
	}
	// A team chart takes the per-run values as the packaged one does.
	knobs := map[string]any{"profile": "team-8gpu", "user": "ann", "priorityClassName": "team-high", "ttlSecondsAfterFinished": 600,
		"env": map[string]any{"TEAM": "rl"}, "tolerations": []any{map[string]any{"key": "team", "operator": "Exists"}}}
	got, _, err := helmTemplateNamed(c, "exp-1", knobs, "team-a")
	require.NoError(t, err)
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe:    idx.Profiles[0].Recipe,
		Profile:   idx.Profiles[0].Profile,
		Namespace: "team-a",
		Overrides: []string{"infra.scheduler.priorityClassName=team-high", "infra.launch.rayjob.ttlSecondsAfterFinished=600", "infra.env={TEAM: rl}",
			"infra.placement.tolerations=[{key: team, operator: Exists}]"},
		Run: runparams.Run{
			Mode: runparams.RayJob,
			User: "ann",
			Name: "exp-1",
			Labels: map[string]string{"helm.sh/chart": "team-rl-1.2.3",
				"app.kubernetes.io/name": "team-rl", "app.kubernetes.io/version": "2.0.0", "app.kubernetes.io/managed-by": chartgen.ChartManagedBy},
		},
	})
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	want, err := emit.Stream(res.Docs)
	require.NoError(t, err)
	assert.Equal(t, string(want), stripSource(got))
	assert.Contains(t, got, "priorityClassName: team-high")
}

// TestNewChartProfileEnv: a team profile with env of its own packages, and
// the chart refuses an env value for it (the engine writes the profile's and
// the run's variables in one name order, which a substitution cannot): its
// schema refuses it, and its data records why.
func TestNewChartProfileEnv(t *testing.T) {
	c, err := teamChart(t, "team-env", func(p string) string { return p + "\nenv: {TEAM_VAR: x}\n" })
	require.NoError(t, err)
	got, _, err := helmTemplateNamed(c, "exp-1", map[string]any{"profile": "team-env", "user": "ann"}, "team-a")
	require.NoError(t, err)
	assert.Contains(t, got, "name: TEAM_VAR")
	_, _, err = helmTemplateNamed(c, "exp-1", map[string]any{"profile": "team-env", "user": "ann", "env": map[string]any{"MORE": "y"}}, "team-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at '/env': maxProperties: got 1, want 0")
	assert.Contains(t, chartMeta(t, c).Profiles["team-env"].Renders["rayjob"].Unavailable["env"], "the profile sets env itself")
}

// TestChartConventions: Helm's label conventions (helm create's helpers),
// global values for subchart use, and the kubeVersion each render needs.
func TestChartConventions(t *testing.T) {
	base := loadChart(t)
	vals := func(extra map[string]any) map[string]any {
		v := map[string]any{"profile": "gb300-qwen3-30b-math-4n-4gpu", "user": "ann", "global": map[string]any{"imageRegistry": "x"}}
		for k, val := range extra {
			v[k] = val
		}
		return v
	}
	// A long chart name and version: helm.sh/chart is cut to 63 characters
	// and does not end in '-', or helm install fails on the label value.
	c := *base
	meta := *base.Metadata
	meta.Name = "platform-team-nemo-rl-runs-for-gb300-and-h100"
	meta.Version = "12.345.6789-rc.1+build.20261203"
	c.Metadata = &meta
	out, _, err := helmTemplate(&c, vals(nil), "team-a")
	require.NoError(t, err, "global is accepted")
	objs, err := runcheck.Parse([]byte(out))
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	labelValue := regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	for _, o := range objs {
		l := o.Labels["helm.sh/chart"]
		assert.LessOrEqual(t, len(l), 63, o.ID())
		assert.Regexp(t, labelValue, l, o.ID())
		assert.True(t, strings.HasPrefix(l, "platform-team-nemo-rl-runs-for-gb300-and-h100-12.345.6789-rc"), l)
		assert.Equal(t, meta.Name, o.Labels["app.kubernetes.io/name"], o.ID())
		assert.Equal(t, "v0.1.0", o.Labels["app.kubernetes.io/version"], o.ID())
		assert.Equal(t, "Helm", o.Labels["app.kubernetes.io/managed-by"], o.ID(), "as helm install writes it")
	}

	// resource.k8s.io/v1 (the DRA profiles) is served from 1.34 on.
	old := *chartutil.DefaultCapabilities
	old.KubeVersion = chartutil.KubeVersion{Version: "v1.33.4", Major: "1", Minor: "33"}
	_, _, err = helmTemplateCaps(base, "my-run", vals(nil), "team-a", &old)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expected a cluster version >= 1.34.0-0")
	_, _, err = helmTemplateCaps(base, "my-run", vals(map[string]any{"profile": "generic-single-node-8gpu"}), "team-a", &old)
	require.NoError(t, err, "a profile without DRA renders for 1.33")
	// A version Helm cannot compare (a Kubernetes built without its release
	// ldflags, as the operator tier's) is not checked, rather than failing
	// every DRA profile with "invalid semantic version".
	dev := *chartutil.DefaultCapabilities
	dev.KubeVersion = chartutil.KubeVersion{Version: "v0.0.0-master+$Format:%H$", Major: "", Minor: ""}
	_, _, err = helmTemplateCaps(base, "my-run", vals(nil), "team-a", &dev)
	require.NoError(t, err, "an unparseable cluster version is not compared")
}

// teamChart is chart-new's chart of a one-profile team index: the generic
// single-node profile, edited, under the name given (chart and profile).
func teamChart(t *testing.T, name string, edit func(profile string) string) (*chart.Chart, error) {
	t.Helper()
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	e := entry(t, "generic-single-node-8gpu")
	prof, err := os.ReadFile(e.Profile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "team.infra.yaml"), []byte(edit(string(prof))), 0o644))
	idxFile := filepath.Join(tmp, "index.yaml")
	require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf("profiles:\n- name: %s\n  description: d\n  profile: team.infra.yaml\n  recipe: %s\n",
		name, relTo(t, tmp, filepath.Join(root, e.Recipe)))), 0o644))
	idx, err := chartgen.LoadIndex(filepath.ToSlash(idxFile))
	require.NoError(t, err)
	dir := filepath.Join(tmp, "chart")
	if err := chartgen.NewChart(idx, dir, chartgen.ChartMeta{Name: name, Version: "0.1.0"}); err != nil {
		return nil, err
	}
	return mustLoad(t, dir), nil
}

// relTo is target relative to dir (a team index names its files so).
func relTo(t *testing.T, dir, target string) string {
	t.Helper()
	rel, err := filepath.Rel(dir, target)
	require.NoError(t, err)
	return filepath.ToSlash(rel)
}

func mustLoad(t *testing.T, dir string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(dir)
	require.NoError(t, err)
	return c
}

// TestNewChartEnv: chart-new resolves ${oc.env:VAR,default} as nrl-k8s
// render does, in the packager's environment: a set variable wins over the
// default, and a set variable without default resolves (chart-data refuses
// both, its committed chart must not depend on a machine).
func TestNewChartEnv(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	e := entry(t, "generic-single-node-8gpu")
	src, err := os.ReadFile(e.Profile)
	require.NoError(t, err)
	for _, tc := range []struct{ expr, want string }{
		{"${oc.env:NRL_TEAM_IMAGE,nvcr.io/nvidia/nemo-rl:v0.5.0}", "registry.team.example/nemo-rl:team-1"},
		{"${oc.env:NRL_TEAM_IMAGE}", "registry.team.example/nemo-rl:team-1"},
	} {
		prof := filepath.Join(tmp, "team.infra.yaml")
		text := strings.Replace(string(src), "image: nvcr.io/nvidia/nemo-rl:v0.5.0", "image: "+tc.expr, 1)
		require.NotEqual(t, string(src), text)
		require.NoError(t, os.WriteFile(prof, []byte(text), 0o644))
		idxFile := filepath.Join(tmp, "index.yaml")
		require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf("profiles:\n- name: team\n  description: d\n  profile: team.infra.yaml\n  recipe: %s\n", relTo(t, tmp, filepath.Join(root, e.Recipe)))), 0o644))
		idx, err := chartgen.LoadIndex(filepath.ToSlash(idxFile))
		require.NoError(t, err)
		env := func(k string) (string, bool) {
			if k == "NRL_TEAM_IMAGE" {
				return tc.want, true
			}
			return "", false
		}
		dir := t.TempDir()
		require.NoError(t, chartgen.NewChart(idx, dir, chartgen.ChartMeta{Name: "team-rl", Version: "1.0.0", Env: env}), tc.expr)
		got, _, err := helmTemplateNamed(mustLoad(t, dir), "exp-1", map[string]any{"profile": "team", "user": "ann"}, "team-a")
		require.NoError(t, err)
		assert.Contains(t, got, "image: "+tc.want, tc.expr)
		res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
			Recipe:    idx.Profiles[0].Recipe,
			Profile:   idx.Profiles[0].Profile,
			Namespace: "team-a",
			Env:       env,
			Run: runparams.Run{
				Mode: runparams.RayJob,
				User: "ann",
				Name: "exp-1",
				Labels: map[string]string{"helm.sh/chart": "team-rl-1.0.0",
					"app.kubernetes.io/name": "team-rl", "app.kubernetes.io/version": "v0.1.0", "app.kubernetes.io/managed-by": chartgen.ChartManagedBy},
			},
		})
		require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
		want, err := emit.Stream(res.Docs)
		require.NoError(t, err)
		assert.Equal(t, string(want), stripSource(got), tc.expr)
	}
}

// chartMeta is a chart's files/profiles.json.
func chartMeta(t *testing.T, c *chart.Chart) *chartgen.Meta {
	t.Helper()
	i := slices.IndexFunc(c.Files, func(f *chart.File) bool { return f.Name == chartgen.MetaFile })
	require.GreaterOrEqual(t, i, 0, chartgen.MetaFile)
	var meta chartgen.Meta
	require.NoError(t, json.Unmarshal(c.Files[i].Data, &meta))
	return &meta
}

// TestNewChartRayJobOnlyProfile: a profile that ships its recipe in a
// ConfigMap renders in rayjob mode only; chart-new packages the modes it
// can, and the chart's schema refuses raycluster mode (its data records the
// engine's reason) instead of chart-new failing (and suggesting a flag it
// does not have).
func TestNewChartRayJobOnlyProfile(t *testing.T) {
	c, err := teamChart(t, "team-cm", func(p string) string {
		return strings.Replace(p, "launch:\n", "launch:\n  recipeSource: configMap\n", 1)
	})
	require.NoError(t, err, "chart-new packages a rayjob-only profile")
	got, _, err := helmTemplateNamed(c, "exp-1", map[string]any{"profile": "team-cm", "user": "ann"}, "team-a")
	require.NoError(t, err)
	assert.Contains(t, got, "kind: ConfigMap", "the recipe ships with the run")
	_, _, err = helmTemplateNamed(c, "exp-1", map[string]any{"profile": "team-cm", "user": "ann", "mode": "raycluster"}, "team-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at '/mode': value must be one of 'rayjob', 'dev'")
	why := chartMeta(t, c).Profiles["team-cm"].ModesRefused["raycluster"]
	assert.Contains(t, why, "recipeSource")
	assert.Contains(t, why, "mode=rayjob", "the chart's own way to ask for rayjob mode")
}
