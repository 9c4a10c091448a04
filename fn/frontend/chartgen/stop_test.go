package chartgen_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

// stoppedRuns are state=stopped releases: a KAI GB300 profile and the H100
// Kueue profile in every mode, plain and with every kind of value (run id,
// overrides, image, labels, annotations, per-run knobs), a shipped recipe,
// and a shared-services release (its Deployments at 0 replicas, as the
// engine renders them).
func stoppedRuns(t *testing.T) []run {
	var runs []run
	knobs := map[string]map[string]any{
		"gb300-qwen3-30b-math-4n-4gpu": {"priorityClassName": "rl-high", "env": map[string]any{"NRL_NOTE": "x"}, "suspend": false, "ttlSecondsAfterFinished": 0},
		"h100-kueue-2n8g":              {"queue": "team-b-queue", "workloadPriorityClass": "rl-batch"},
	}
	for _, profile := range []string{"gb300-qwen3-30b-math-4n-4gpu", "h100-kueue-2n8g"} {
		for _, mode := range runparams.Modes {
			runs = append(runs,
				run{profile: profile, mode: mode, user: "ann", namespace: "team-a", state: runparams.Stopped},
				run{profile: profile, mode: mode, user: "ann", namespace: "team-a", state: runparams.Stopped, runID: "e7", overrides: twoOverrides,
					release: "sweep-a", image: "registry.example/nemo-rl:v2",
					labels: map[string]string{"cost-center": "rl-42"}, annos: map[string]string{"example.com/note": `a "quoted" <note>`}})
		}
		runs = append(runs,
			run{profile: profile, mode: runparams.RayJob, user: "ann", namespace: "team-a", state: runparams.Stopped, knobs: knobs[profile], infra: knobInfra[profile]},
			run{profile: profile, mode: runparams.RayJob, user: "ann", namespace: "team-a", state: runparams.Stopped, runID: "e7", ships: entry(t, profile).Recipe})
	}
	runs = append(runs,
		run{profile: "gb300-ultra-48n-pipeclean", mode: servicesMode, user: "ann", namespace: "team-a", release: "ann-sandbox", state: runparams.Stopped},
		run{profile: "gb300-ultra-48n-pipeclean", mode: servicesMode, user: "ann", namespace: "team-a", release: "ann-sandbox", state: runparams.Stopped,
			image: "registry.example/sandbox:v3", annos: map[string]string{"example.com/note": "shared"}})
	return runs
}

// knobInfra are the nrl-k8s render infra overrides stoppedRuns' knobs mean.
var knobInfra = map[string][]string{
	"gb300-qwen3-30b-math-4n-4gpu": {"infra.scheduler.priorityClassName=rl-high", "infra.env.NRL_NOTE=x", "infra.launch.rayjob.suspend=false", "infra.launch.rayjob.ttlSecondsAfterFinished=0"},
	"h100-kueue-2n8g":              {"infra.scheduler.queue=team-b-queue", "infra.scheduler.workloadPriorityClass=rl-batch"},
}

// equalRender asserts helm template's output is nrl-k8s render's: a run
// whose stopped form has no object (a Kueue run in rayjob mode) prints
// nothing, where helm prints an empty manifest.
func equalRender(t *testing.T, want, got, msg string) {
	t.Helper()
	if want == "" {
		assert.Empty(t, strings.TrimSpace(stripSource(got)), msg)
		return
	}
	assert.Equal(t, want, stripSource(got), msg)
}

// TestStoppedParity: with state stopped, helm v3's engine renders what
// nrl-k8s render --state stopped writes, and that is not the running run
// (the plan did something): per profile and mode, what the engine's stop
// does shows in the chart's output.
func TestStoppedParity(t *testing.T) {
	c := loadChart(t)
	for _, r := range stoppedRuns(t) {
		t.Run(r.String()+"/"+r.releaseName(), func(t *testing.T) {
			want, msg, ok := engineRender(t, r)
			require.True(t, ok, msg)
			got, notes, err := helmTemplateNamed(c, r.releaseName(), r.values(t), r.namespace)
			require.NoError(t, err)
			equalRender(t, want, got, r.String())
			if len(strings.TrimSpace(got)) > 0 {
				assert.Contains(t, notes, "Stopped (state=stopped)")
				assert.Contains(t, notes, "--reuse-values --set state=run")
				assert.NotContains(t, notes, `patch rayjob`, "a stopped run is started again by its state, not by a patch")
			}

			running := r
			running.state = ""
			before, _, err := helmTemplateNamed(c, r.releaseName(), running.values(t), r.namespace)
			require.NoError(t, err)
			assert.NotEqual(t, stripSource(before), stripSource(got), "state stopped changes the release")
			objs, err := runcheck.Parse([]byte(got))
			require.NoError(t, err)
			for _, o := range objs {
				if o.Kind == "RayJob" || o.Kind == "RayCluster" {
					assert.Contains(t, got, "suspend: true", "%s %s is suspended", o.Kind, o.Name)
				}
			}
			if strings.HasPrefix(r.profile, "h100-kueue") {
				for _, o := range objs {
					assert.NotContains(t, []string{"RayJob", "RayCluster", "Pod"}, o.Kind, "Kueue admits it (or a Pod): left out")
				}
			}
			if r.mode == servicesMode {
				assert.Contains(t, got, "replicas: 0")
			}
			if len(objs) > 0 {
				assert.Contains(t, got, vocab.StateAnnotation+": stopped")
			}
		})
	}
}

// TestStoppedRealHelm: the pinned Helm 3 and Helm 4 CLIs template every
// stopped run to nrl-k8s render --state stopped's bytes, and refuse a state
// that is neither run nor stopped.
func TestStoppedRealHelm(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	for env, bin := range clis {
		t.Run(env, func(t *testing.T) {
			for _, r := range stoppedRuns(t) {
				want, msg, ok := engineRender(t, r)
				require.True(t, ok, msg)
				out, errOut, err := helmCmd(t, bin, cliArgs(t, r)...)
				require.NoError(t, err, "%s: %s", r, errOut)
				equalRender(t, want, out, r.String())
			}
			_, errOut, err := helmCmd(t, bin, "template", "r", chartDir, "--kube-version", "1.34.0", "--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "state=paused")
			require.Error(t, err)
			assert.Contains(t, errOut, "at '/state'")
		})
	}
}

// TestStateRefused: a state that is neither run nor stopped is refused by
// the schema, naming both; a label or annotation under the state key is
// refused as the engine does.
func TestStateRefused(t *testing.T) {
	c := loadChart(t)
	vals := run{profile: "generic-single-node-8gpu", mode: runparams.RayJob, user: "ann", namespace: "team-a", state: "paused"}.values(t)
	_, _, err := helmTemplate(c, vals, "team-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at '/state': value must be one of 'run', 'stopped'")

	// The state annotation as a label or annotation value: nrl-k8s render
	// refuses it (a running run carrying it reads as stopped), so does the
	// chart, in either state.
	for _, r := range []run{
		{profile: "generic-single-node-8gpu", mode: runparams.RayJob, user: "ann", namespace: "team-a", annos: map[string]string{vocab.StateAnnotation: "stopped"}},
		{profile: "generic-single-node-8gpu", mode: runparams.RayCluster, user: "ann", namespace: "team-a", state: runparams.Stopped, labels: map[string]string{vocab.StateAnnotation: "stopped"}},
	} {
		_, msg, ok := engineRender(t, r)
		require.False(t, ok)
		assert.Contains(t, msg, "sets "+vocab.StateAnnotation)
		_, _, err := helmTemplate(c, r.values(t), "team-a")
		require.Error(t, err, r.String())
		assert.Contains(t, err.Error(), "key \""+vocab.StateAnnotation+"\" says a run's declared state")
	}
}

// TestUpgradeStopAndRestart: helm upgrade that stops a run passes the
// upgrade guard (KubeRay honours spec.suspend), and so does any upgrade of
// a run whose live objects the engine stopped (state=run starts it again
// from the spec as it is then); a running run's upgrade stays refused.
func TestUpgradeStopAndRestart(t *testing.T) {
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		r := run{profile: "gb300-qwen3-30b-math-4n-4gpu", mode: mode, user: "ann", namespace: "team-a"}
		out, _, err := helmTemplate(loadChart(t), r.values(t), "team-a")
		require.NoError(t, err)
		objs, err := runcheck.Parse([]byte(out))
		require.NoError(t, err)
		live := func(stopped bool) liveCluster {
			var in []runtime.Object
			for _, o := range objs {
				if _, ray := rayGVR[o.Kind]; !ray {
					continue
				}
				md := map[string]any{"name": o.Name, "namespace": o.Namespace}
				if stopped {
					md["annotations"] = map[string]any{vocab.StateAnnotation: string(runparams.Stopped)}
				}
				in = append(in, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": o.Kind, "metadata": md}})
			}
			require.NotEmpty(t, in)
			return newLiveCluster(in...)
		}
		stop := r.values(t)
		stop["state"] = string(runparams.Stopped)
		require.NoError(t, helmUpgrade(t, stop, live(false)), "%s: stopping a running run", mode)
		restart := r.values(t)
		restart["image"] = "registry.example/nemo-rl:v2"
		require.NoError(t, helmUpgrade(t, restart, live(true)), "%s: starting a stopped run again, changed", mode)
		err = helmUpgrade(t, restart, live(false))
		require.Error(t, err, "%s: a running run's change never reaches it", mode)
		assert.Contains(t, err.Error(), "nemo-rl-run: helm upgrade of run")
	}
}

// TestDiffStopped: the plan is read off the two renders; a stopped form
// the chart could not carry as a plan is an error saying what it does.
func TestDiffStopped(t *testing.T) {
	running := `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j"},"spec":{"x":[1]}}]`
	for _, tc := range []struct {
		name, stopped, want, err string
	}{
		{name: "left out and set", stopped: `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"s":"stopped"},"name":"a"}}]`,
			want: `{"leftOut":[1],"set":[{"doc":0,"path":["metadata","annotations","s"],"value":"stopped"}]}`},
		{name: "field removed", stopped: `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j"},"spec":{}}]`, err: "removes spec.x"},
		{name: "list changed", stopped: `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j"},"spec":{"x":[2]}}]`, err: "changes the list spec.x"},
		{name: "object added", stopped: `[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]`, err: "which the running one has not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := chartgen.DiffStopped(running, tc.stopped)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			got, err := json.Marshal(plan)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			applied, err := chartgen.ApplyStop(running, plan)
			require.NoError(t, err)
			assert.JSONEq(t, tc.stopped, applied, "ApplyStop(running, plan) is the stopped render")
		})
	}
}

// releaseRecord is the size of the Secret data Helm 3 stores for a release
// of c (storage/driver's encodeRelease: the release as JSON, gzipped at
// best compression, base64): a Secret holds at most 1 MiB.
func releaseRecord(t *testing.T, c *chart.Chart, vals map[string]any, manifest string) int {
	t.Helper()
	b, err := json.Marshal(&release.Release{Name: "my-run", Namespace: "team-a", Version: 1, Chart: c, Config: vals, Manifest: manifest,
		Info: &release.Info{Status: release.StatusDeployed}})
	require.NoError(t, err)
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return base64.StdEncoding.EncodedLen(buf.Len())
}

// TestReleaseRecordSize: the release record of the largest run stays well
// under the Secret's 1 MiB with the stop plans. Measured beside it: the
// record if the chart carried a stopped copy of every render instead.
func TestReleaseRecordSize(t *testing.T) {
	c := loadChart(t)
	r := run{profile: "gb300-ultra-64n-pipeclean", mode: runparams.RayCluster, user: "alice", namespace: "team-a", state: runparams.Stopped}
	out, _, err := helmTemplate(c, r.values(t), "team-a")
	require.NoError(t, err)
	size := releaseRecord(t, c, r.values(t), out)
	assert.Less(t, size, 512<<10, "the release record grows towards the Secret's 1 MiB limit")

	copied := *c
	copied.Files = append([]*chart.File(nil), c.Files...)
	data := map[string][]byte{}
	for _, f := range c.Files {
		data[f.Name] = f.Data
	}
	for _, p := range readMeta(t).Profiles {
		for key, rm := range p.Renders {
			// The stopped copy a variant would store: the sentinel data
			// with the engine's stop applied.
			stopped, err := chartgen.ApplyStop(string(data[rm.File]), rm.Stopped)
			require.NoError(t, err, key)
			copied.Files = append(copied.Files, &chart.File{Name: strings.TrimSuffix(rm.File, ".json") + "." + key + ".stopped.json", Data: []byte(stopped)})
		}
	}
	t.Logf("release record: %d bytes with stop plans; %d with a stopped copy of every render", size, releaseRecord(t, &copied, r.values(t), out))
}
