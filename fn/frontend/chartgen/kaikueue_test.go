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

// kaiKueueChart is a team chart (chart-new) of two profiles where KAI
// places and Kueue admits (scheduler: {kind: kai, ..., kueue: {queue,
// workloadPriorityClass}}): the H200 profile (its KAI queue is
// scheduler.queue) with scheduler.kueue added, without a priority class,
// and the gb300-kai-kueue golden's (its KAI queue is written in the
// training cluster's labels; a priority class).
func kaiKueueChart(t *testing.T) (dir string, idx *chartgen.Index) {
	t.Helper()
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	h200 := entry(t, "h200-research-16n8g")
	prof := fmt.Sprintf("defaults: [%s]\nscheduler:\n  kind: kai\n  queue: research\n  kueue: {queue: team-a}\n",
		relTo(t, tmp, filepath.Join(root, h200.Profile)))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "h200-kk.infra.yaml"), []byte(prof), 0o644))
	gb300 := filepath.Join(root, "tests/golden/gb300-kai-kueue/kai-kueue.infra.yaml")
	gb300Recipe := filepath.Join(root, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml")
	idxFile := filepath.Join(tmp, "index.yaml")
	require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf("profiles:\n- name: h200-kk\n  description: d\n  profile: h200-kk.infra.yaml\n  recipe: %s\n"+
		"- name: gb300-kk\n  description: d\n  profile: %s\n  recipe: %s\n",
		relTo(t, tmp, filepath.Join(root, h200.Recipe)), relTo(t, tmp, gb300), relTo(t, tmp, gb300Recipe))), 0o644))
	idx, err = chartgen.LoadIndex(filepath.ToSlash(idxFile))
	require.NoError(t, err)
	dir = filepath.Join(tmp, "chart")
	require.NoError(t, chartgen.NewChart(idx, dir, chartgen.ChartMeta{Name: "team-rl", Version: "1.0.0"}))
	return dir, idx
}

// teamRender is nrl-k8s render of a team chart's profile as the chart's
// release: named after it, labelled with the chart.
func teamRender(t *testing.T, e chartgen.Entry, r run) string {
	t.Helper()
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe: e.Recipe, Profile: e.Profile, Namespace: r.namespace, Overrides: r.infra,
		Run: runparams.Run{Mode: r.mode, User: r.user, RunID: r.runID, Name: r.releaseName(), NoDeployments: true, State: r.state, Labels: map[string]string{
			"helm.sh/chart": "team-rl-1.0.0", "app.kubernetes.io/name": "team-rl", "app.kubernetes.io/version": "v0.1.0",
			"app.kubernetes.io/managed-by": chartgen.ChartManagedBy}},
	})
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	b, err := emit.Stream(res.Docs)
	require.NoError(t, err)
	return string(b)
}

// TestTeamChartKAIAndKueue: a team chart of profiles where KAI places and
// Kueue admits takes, per release, the KAI queue (`queue`, as
// infra.scheduler.queue), the Kueue LocalQueue (`kueueQueue`, as
// infra.scheduler.kueue.queue) and the WorkloadPriorityClass
// (`workloadPriorityClass`, as infra.scheduler.kueue.workloadPriorityClass),
// and prints what nrl-k8s render prints with those overrides, in rayjob and
// raycluster mode, in process and with the pinned Helm 3 and 4. The schema
// checks the LocalQueue; hand-written Kueue labels are refused with a
// pointer to the values; the README names the value that sets each queue.
func TestTeamChartKAIAndKueue(t *testing.T) {
	dir, idx := kaiKueueChart(t)
	c := mustLoad(t, dir)
	entries := map[string]chartgen.Entry{}
	for _, e := range idx.Profiles {
		entries[e.Name] = e
	}
	h200 := func(mode runparams.Mode) run {
		return run{profile: "h200-kk", mode: mode, user: "ann", namespace: "team-a"}
	}
	gb300 := func(mode runparams.Mode) run {
		return run{profile: "gb300-kk", mode: mode, user: "ann", namespace: "team-a"}
	}
	with := func(r run, knobs map[string]any, infra ...string) run {
		r.knobs, r.infra = knobs, infra
		return r
	}
	withID := func(r run) run { r.runID = "e7"; return r }
	for _, tc := range []struct {
		name        string
		run         run
		wants, nots []string
	}{
		{"h200 profile's own", h200(runparams.RayJob),
			[]string{"kai.scheduler/queue: research", "kueue.x-k8s.io/queue-name: team-a"}, []string{"kueue.x-k8s.io/priority-class"}},
		{"h200 all three", with(h200(runparams.RayJob), map[string]any{"queue": "team-b", "kueueQueue": "team-b-lq", "workloadPriorityClass": "team-b-high"},
			"infra.scheduler.queue=team-b", "infra.scheduler.kueue.queue=team-b-lq", "infra.scheduler.kueue.workloadPriorityClass=team-b-high"),
			[]string{"kai.scheduler/queue: team-b", "kueue.x-k8s.io/queue-name: team-b-lq", "kueue.x-k8s.io/priority-class: team-b-high"},
			[]string{"kai.scheduler/queue: research", "queue-name: team-a"}},
		{"h200 raycluster LocalQueue", with(withID(h200(runparams.RayCluster)), map[string]any{"kueueQueue": "team-b.lq"}, "infra.scheduler.kueue.queue=team-b.lq"),
			[]string{"kai.scheduler/queue: research", "kueue.x-k8s.io/queue-name: team-b.lq"}, []string{"queue-name: team-a", "kueue.x-k8s.io/priority-class"}},
		{"gb300 LocalQueue and priority", with(gb300(runparams.RayJob), map[string]any{"kueueQueue": "team-c", "workloadPriorityClass": "team-c-low"},
			"infra.scheduler.kueue.queue=team-c", "infra.scheduler.kueue.workloadPriorityClass=team-c-low"),
			[]string{"kai.scheduler/queue: rl", "kueue.x-k8s.io/queue-name: team-c", "kueue.x-k8s.io/priority-class: team-c-low"}, []string{"queue-name: team-a", "team-a-high"}},
		{"gb300 raycluster priority", with(withID(gb300(runparams.RayCluster)), map[string]any{"workloadPriorityClass": "team-c-low"},
			"infra.scheduler.kueue.workloadPriorityClass=team-c-low"),
			[]string{"kueue.x-k8s.io/queue-name: team-a", "kueue.x-k8s.io/priority-class: team-c-low"}, []string{"team-a-high"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := teamRender(t, entries[tc.run.profile], tc.run)
			got, _, err := helmTemplate(c, tc.run.values(t), tc.run.namespace)
			require.NoError(t, err)
			require.Equal(t, want, stripSource(got))
			for _, w := range tc.wants {
				assert.Contains(t, got, w)
			}
			for _, n := range tc.nots {
				assert.NotContains(t, got, n)
			}
			assert.Equal(t, 1, strings.Count(got, "kueue.x-k8s.io/queue-name:"), "Kueue's label on the object Kueue admits alone")
		})
	}

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			run  run
			want string
		}{
			{"LocalQueue not a name", with(h200(runparams.RayJob), map[string]any{"kueueQueue": "Team_B"}), "at '/kueueQueue'"},
			{"KAI queue the profile's clusters name", with(gb300(runparams.RayJob), map[string]any{"queue": "team-b"}),
				"at '/queue': value must be ''"},
			{"reserved LocalQueue", with(h200(runparams.RayJob), map[string]any{"kueueQueue": chartgen.SentinelKueueQueue}), "are reserved"},
			{"Kueue queue as a label", run{profile: "h200-kk", mode: runparams.RayJob, user: "ann", namespace: "team-a", labels: map[string]string{"kueue.x-k8s.io/queue-name": "x"}},
				`team-rl: labels key "kueue.x-k8s.io/queue-name": Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the kueueQueue value`},
			{"Kueue priority as a label", run{profile: "gb300-kk", mode: runparams.RayCluster, user: "ann", namespace: "team-a", labels: map[string]string{"kueue.x-k8s.io/priority-class": "x"}},
				`team-rl: labels key "kueue.x-k8s.io/priority-class": Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the workloadPriorityClass value`},
		} {
			_, _, err := helmTemplate(c, tc.run.values(t), tc.run.namespace)
			require.Error(t, err, tc.name)
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	})

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "| KAI queue `research` (`queue` sets it); Kueue LocalQueue `team-a` (`kueueQueue` sets it) |")
	assert.Contains(t, string(readme), "| KAI queue `rl`, the profile's (`queue` is refused); Kueue LocalQueue `team-a` (`kueueQueue` sets it) |")

	t.Run("real helm", func(t *testing.T) {
		r := with(h200(runparams.RayJob), map[string]any{"queue": "team-b", "kueueQueue": "team-b-lq", "workloadPriorityClass": "team-b-high"},
			"infra.scheduler.queue=team-b", "infra.scheduler.kueue.queue=team-b-lq", "infra.scheduler.kueue.workloadPriorityClass=team-b-high")
		want := teamRender(t, entries[r.profile], r)
		for env, bin := range helmCLIs(t) {
			out, errOut, err := helmCmd(t, bin, "template", r.releaseName(), dir, "--kube-version", "1.34.0", "-n", r.namespace, "--set", "profile=h200-kk", "--set", "user=ann",
				"--set", "queue=team-b", "--set", "kueueQueue=team-b-lq", "--set", "workloadPriorityClass=team-b-high")
			require.NoError(t, err, "%s: %s", env, errOut)
			assert.Equal(t, want, stripSource(out), env)
		}
	})
}

// TestTeamChartStopped: a stopped release of a team chart where KAI places
// and Kueue admits leaves out what Kueue admits (the RayJob, in raycluster
// mode the RayCluster and the job submitted to it), whichever LocalQueue
// the release names, as nrl-k8s render --state stopped does.
func TestTeamChartStopped(t *testing.T) {
	dir, idx := kaiKueueChart(t)
	c := mustLoad(t, dir)
	entries := map[string]chartgen.Entry{}
	for _, e := range idx.Profiles {
		entries[e.Name] = e
	}
	for _, r := range []run{
		{profile: "h200-kk", mode: runparams.RayJob, user: "ann", namespace: "team-a", state: runparams.Stopped,
			knobs: map[string]any{"kueueQueue": "team-b-lq"}, infra: []string{"infra.scheduler.kueue.queue=team-b-lq"}},
		{profile: "gb300-kk", mode: runparams.RayCluster, user: "ann", namespace: "team-a", runID: "e7", state: runparams.Stopped},
	} {
		t.Run(r.String(), func(t *testing.T) {
			want := teamRender(t, entries[r.profile], r)
			got, _, err := helmTemplate(c, r.values(t), r.namespace)
			require.NoError(t, err)
			require.Equal(t, want, stripSource(got))
			for _, n := range []string{"kind: RayJob", "kind: RayCluster", "queue-name"} {
				assert.NotContains(t, got, n)
			}
			running := r
			running.state = ""
			before, _, err := helmTemplate(c, running.values(t), r.namespace)
			require.NoError(t, err)
			assert.Contains(t, before, "kueue.x-k8s.io/queue-name:", "the running release has what Kueue admits")
		})
	}
}
