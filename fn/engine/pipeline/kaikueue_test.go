package pipeline_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

const kaiOnly = "scheduler: {kind: kai, queue: q}\n"

// renderWith renders goodProfile with its scheduler replaced.
func renderWith(t *testing.T, scheduler string, mode runparams.Mode, edits ...string) *pipeline.Result {
	t.Helper()
	p := strings.Replace(goodProfile, kaiOnly, scheduler, 1)
	require.NotEqual(t, goodProfile, p)
	for i := 0; i+1 < len(edits); i += 2 {
		q := strings.Replace(p, edits[i], edits[i+1], 1)
		require.NotEqual(t, p, q, "edit %q", edits[i])
		p = q
	}
	src := source.Memory{"p.infra.yaml": []byte(p), "r.yaml": []byte(goodRecipe)}
	return pipeline.Render(recipe.NewLoader(src), pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: fixtures.As(mode)})
}

func docOf(docs []rendered.Doc, kind string) map[string]any {
	for _, d := range docs {
		if d.Kind == kind {
			return d.Data
		}
	}
	return nil
}

func metaOf(obj map[string]any, key string) map[string]any {
	m, _ := obj["metadata"].(map[string]any)[key].(map[string]any)
	return m
}

var lineNo = regexp.MustCompile(`^line [0-9]+: `)

// findings are ds's findings of one severity, one "field: message" a line
// (the message without its line number).
func findings(ds diag.List, sev diag.Severity) string {
	var b strings.Builder
	for _, d := range ds {
		if d.Severity == sev {
			b.WriteString(d.Field + ": " + lineNo.ReplaceAllString(d.Message, "") + "\n")
		}
	}
	return b.String()
}

// KAI places, Kueue admits: Kueue's labels on the object Kueue admits,
// KAI's scheduler, queue and run-wide topology as under KAI alone, and
// check reports both Kueue's Workload and KAI's gang.
func TestKAIAndKueueTogether(t *testing.T) {
	both := "scheduler: {kind: kai, queue: q, topology: {topology: t, requiredPlacement: nvidia.com/gpu.clique}, kueue: {queue: lab-queue, workloadPriorityClass: lab-high}}\n"
	for _, c := range []struct {
		mode runparams.Mode
		kind string
		pods string
	}{{runparams.RayJob, "RayJob", "rayClusterSpec"}, {runparams.RayCluster, "RayCluster", ""}} {
		t.Run(string(c.mode), func(t *testing.T) {
			res := renderWith(t, both, c.mode)
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
			obj := docOf(res.Docs, c.kind)
			require.NotNil(t, obj)
			labels, ann := metaOf(obj, "labels"), metaOf(obj, "annotations")
			require.Equal(t, "lab-queue", labels[vocab.KueueQueueLabel])
			require.Equal(t, "lab-high", labels[vocab.KueuePriorityClassLabel])
			require.Equal(t, "q", labels[vocab.KAIQueueLabel])
			require.Equal(t, "t", ann[vocab.KAITopologyAnnotation])
			require.Equal(t, "nvidia.com/gpu.clique", ann[vocab.KAIRequiredPlacementAnnotation])
			spec := obj["spec"].(map[string]any)
			if c.pods != "" {
				spec = spec[c.pods].(map[string]any)
			}
			head := spec["headGroupSpec"].(map[string]any)["template"].(map[string]any)
			require.Equal(t, vocab.KAISchedulerName, head["spec"].(map[string]any)["schedulerName"])
			require.NotContains(t, metaOf(head, "labels"), vocab.KueueQueueLabel, "Kueue reads the admitted object, never its pods")
			infos := findings(res.Diags, diag.Info)
			require.Contains(t, infos, "KAI schedules "+c.kind+"/")
			require.Contains(t, infos, "with run-wide topology required nvidia.com/gpu.clique (topology t)")
			require.Contains(t, infos, "from LocalQueue lab-queue as one Workload")
			// The one warning: the run-wide level binds the CPU head too
			// (KAI's PodGroup constraint, as preflight places it).
			warnings := findings(res.Diags, diag.Warning)
			require.Equal(t, 1, strings.Count(warnings, "\n"), warnings)
			require.Contains(t, warnings, "KAI's run-wide required placement (nvidia.com/gpu.clique) binds every pod of "+c.kind+"/")
		})
	}
}

// scheduler.kueue is Kueue's admission beside KAI, refused anywhere else,
// and Kueue's render-time rules hold beside KAI as they do alone.
func TestKAIAndKueueRefusals(t *testing.T) {
	both := "scheduler: {kind: kai, queue: q, kueue: {queue: lab-queue}}\n"
	for _, c := range []struct {
		name, scheduler string
		edits           []string
		want            string
	}{
		{"suspend", both, []string{"  codeSource: image\n", "  codeSource: image\n  rayjob: {suspend: true}\n"}, "launch.rayjob.suspend: is true but scheduler.kueue is set (Kueue admits the run)"},
		{"queue label by hand", both, []string{"    name: ${user:}-c\n", "    name: ${user:}-c\n    labels: {kueue.x-k8s.io/queue-name: x}\n"}, "kuberay.training.labels.kueue.x-k8s.io/queue-name: is set but scheduler.kueue is set"},
		{"kueue beside kind kueue", "scheduler: {kind: kueue, queue: a, kueue: {queue: b}}\n", nil, `scheduler.kueue: is set but scheduler.kind is "kueue"; expected kind kai`},
		{"kueue beside kind default", "scheduler: {kueue: {queue: b}}\n", nil, `scheduler.kueue: is set but scheduler.kind is "default"; expected kind kai`},
		{"workload priority at the top beside kai", "scheduler: {kind: kai, queue: q, workloadPriorityClass: p}\n", nil, "expected scheduler.kueue.workloadPriorityClass beside KAI"},
		{"no LocalQueue", "scheduler: {kind: kai, queue: q, kueue: {workloadPriorityClass: p}}\n", nil, "scheduler.kueue.queue: is empty; expected the LocalQueue"},
		{"bad LocalQueue", "scheduler: {kind: kai, queue: q, kueue: {queue: Lab_Q}}\n", nil, `scheduler.kueue.queue: found "Lab_Q"; expected a LocalQueue name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := renderWith(t, c.scheduler, runparams.RayJob, c.edits...)
			require.Contains(t, findings(res.Diags, diag.Error), c.want)
		})
	}
}

// Kueue alone on a GB300-like profile (worker templates annotated with KAI
// topology, pods on the default scheduler): no kai.scheduler/* key in the
// output, a warning for each annotation dropped, and one for the
// ComputeDomain that nothing keeps in one NVLink domain.
func TestKueueAloneDropsKAITopology(t *testing.T) {
	res := renderWith(t, "scheduler: {kind: kueue, queue: lab-queue}\n", runparams.RayJob, "segmentSize: 2", "segmentSize: 1",
		"image: img:1\n", "image: img:1\nlabels: {kai.scheduler/queue: q}\n",
		"    name: ${user:}-c\n", "    name: ${user:}-c\n    labels: {kai.scheduler/queue: q}\n")
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	for _, d := range res.Docs {
		b, err := json.Marshal(d.Data)
		require.NoError(t, err)
		require.NotContains(t, string(b), "kai.scheduler/", "%s/%s", d.Kind, d.Name)
	}
	require.Equal(t, "lab-queue", metaOf(docOf(res.Docs, "RayJob"), "labels")[vocab.KueueQueueLabel])
	warns := findings(res.Diags, diag.Warning)
	require.Contains(t, warns, "kuberay.training.spec.workerGroupSpecs[0].template.metadata.annotations.kai.scheduler/topology: is dropped from the rendered pods: scheduler.kind is kueue and the pods go to default-scheduler")
	require.Contains(t, warns, "spans 2 pods in worker groups gpu-segment-0, gpu-segment-1, and nothing keeps them in one NVLink domain: its pods go to default-scheduler, which reads no topology (Kueue, through LocalQueue lab-queue, admits the run against quota and places no pod)")
	require.NotContains(t, warns, "has no kai.scheduler/topology annotation", "no advice to add an annotation nothing would read")
	for _, f := range []string{"labels.kai.scheduler/queue", "kuberay.training.labels.kai.scheduler/queue"} {
		require.Contains(t, warns, f+": is dropped from the rendered objects: scheduler.kind is kueue and no pod of the run goes to kai-scheduler")
	}
}

// Kueue alone on templates that name kai-scheduler by hand (a GB300 profile
// with kind kueue layered on it): KAI does place those pods, their topology
// annotations stay, and check says the profile can name KAI beside Kueue;
// scheduler.topology under kind kueue says how.
func TestKueueAloneWithKAIPods(t *testing.T) {
	res := renderWith(t, "scheduler: {kind: kueue, queue: lab-queue}\n", runparams.RayJob,
		"              tolerations:", "              schedulerName: kai-scheduler\n              tolerations:",
		"image: img:1\n", "image: img:1\nlabels: {kai.scheduler/queue: q}\n")
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	require.Contains(t, findings(res.Diags, diag.Info), "kuberay.training.spec.workerGroupSpecs[0].template.spec.schedulerName: is kai-scheduler while scheduler.kind is kueue: KAI places these pods and Kueue admits the run, which the profile can say as scheduler: {kind: kai, queue: <KAI queue>, kueue: {queue: lab-queue}}")
	require.NotContains(t, findings(res.Diags, diag.Warning), "is dropped from the rendered pods")
	job, err := json.Marshal(docOf(res.Docs, "RayJob"))
	require.NoError(t, err)
	require.Contains(t, string(job), `"kai.scheduler/topology-required-placement":"nvidia.com/gpu.clique"`, "KAI places the workers: their constraint stays")
	require.Equal(t, "q", metaOf(docOf(res.Docs, "RayJob"), "labels")[vocab.KAIQueueLabel], "and KAI's queue with it")
	require.NotContains(t, findings(res.Diags, diag.Warning), "is dropped from the rendered objects")

	res = renderWith(t, "scheduler: {kind: kueue, queue: lab-queue, topology: {topology: t, requiredPlacement: r}}\n", runparams.RayJob)
	require.Contains(t, findings(res.Diags, diag.Error), `scheduler.topology: is set but scheduler.kind is "kueue"; expected kind kai (KAI's pod-grouper is what reads it); with Kueue admitting, keep kind kai and name the LocalQueue in scheduler.kueue.queue`)
}
