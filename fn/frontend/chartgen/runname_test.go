package chartgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
)

// TestTeamChartBothPaths: one profile serves render-all / kustomize and a
// team chart. chart-new packages a profile that reads ${run.name} (per-run
// checkpoint and log folders; a per-run cluster name in raycluster mode):
// under two release names the chart prints what nrl-k8s render --name
// RELEASE prints, in process and with the pinned Helm 3 and 4. The chart is bound to its
// namespaces (chart-new --namespaces): a release elsewhere, or a namespace
// value naming another, is refused with the reason.
func TestTeamChartBothPaths(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	e := entry(t, "generic-single-node-8gpu")
	src, err := os.ReadFile(e.Profile)
	require.NoError(t, err)
	prof := strings.Replace(string(src), "logger.wandb_enabled=false", "logger.wandb_enabled=false \\\n      checkpointing.checkpoint_dir=/mnt/ckpt/${run.name} logger.log_dir=/mnt/logs/${run.name}", 1)
	prof = strings.Replace(prof, "name: ${user:}-single-node-8gpu", "name: ${run.name}-8gpu", 1)
	require.NotEqual(t, string(src), prof)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "team.infra.yaml"), []byte(prof), 0o644))
	idxFile := filepath.Join(tmp, "index.yaml")
	require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf("profiles:\n- name: team\n  description: d\n  profile: team.infra.yaml\n  recipe: %s\n",
		relTo(t, tmp, filepath.Join(root, e.Recipe)))), 0o644))
	idx, err := chartgen.LoadIndex(filepath.ToSlash(idxFile))
	require.NoError(t, err)
	dir := filepath.Join(tmp, "chart")
	require.NoError(t, chartgen.NewChart(idx, dir, chartgen.ChartMeta{Name: "team-rl", Version: "1.0.0", Namespaces: []string{"team-a", "team-a-dev"}}))
	c := mustLoad(t, dir)

	render := func(release string) string {
		res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
			Recipe: idx.Profiles[0].Recipe, Profile: idx.Profiles[0].Profile, Namespace: "team-a-dev",
			Run: runparams.Run{Mode: runparams.RayJob, User: "ann", Name: release, NoDeployments: true, Labels: map[string]string{
				"helm.sh/chart": "team-rl-1.0.0", "app.kubernetes.io/name": "team-rl", "app.kubernetes.io/version": "v0.1.0",
				"app.kubernetes.io/managed-by": chartgen.ChartManagedBy}},
		})
		require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
		b, err := emit.Stream(res.Docs)
		require.NoError(t, err)
		return string(b)
	}
	vals := map[string]any{"profile": "team", "user": "ann"}
	releases := []string{"exp-1", "exp-long-2"}
	for _, rel := range releases {
		want := render(rel)
		for _, path := range []string{"/mnt/ckpt/" + rel + " ", "/mnt/logs/" + rel + "\n"} {
			assert.Contains(t, want, path, "the render is per release")
		}
		got, _, err := helmTemplateNamed(c, rel, vals, "team-a-dev")
		require.NoError(t, err)
		assert.Equal(t, want, stripSource(got), rel)
	}

	for _, tc := range []struct {
		ns   string
		vals map[string]any
		want string
	}{
		{"team-b", vals, `team-rl: release namespace "team-b": this chart is bound to the namespace(s) team-a, team-a-dev (chart-new --namespaces, or the index's namespaces:); expected helm install -n one of them`},
		{"team-a", map[string]any{"profile": "team", "user": "ann", "namespace": "team-b"}, `team-rl: release namespace "team-a", namespace value "team-b": this chart is bound to the namespace(s) team-a, team-a-dev`},
	} {
		_, _, err := helmTemplateNamed(c, "exp-1", tc.vals, tc.ns)
		require.Error(t, err, tc.ns)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, _, err = helmTemplateNamed(c, "exp-1", map[string]any{"profile": "team", "user": "ann", "namespace": "team-a-dev"}, "team-a")
	require.NoError(t, err, "both namespaces bound")

	t.Run("real helm", func(t *testing.T) {
		for env, bin := range helmCLIs(t) {
			for _, rel := range releases {
				out, errOut, err := helmCmd(t, bin, "template", rel, dir, "--kube-version", "1.34.0", "-n", "team-a-dev", "--set", "profile=team", "--set", "user=ann")
				require.NoError(t, err, "%s: %s", env, errOut)
				assert.Equal(t, render(rel), stripSource(out), "%s %s", env, rel)
			}
			_, errOut, err := helmCmd(t, bin, "template", "exp-1", dir, "--kube-version", "1.34.0", "-n", "team-b", "--set", "profile=team", "--set", "user=ann")
			require.Error(t, err, env)
			assert.Contains(t, errOut, `release namespace "team-b": this chart is bound to the namespace(s) team-a, team-a-dev`, env)
		}
	})
}
