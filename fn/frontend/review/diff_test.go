package review

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gpuRun is a run with the given objects ("Kind/name" to content) and
// pods GPU pods of 8 GPUs.
func gpuRun(pods int64, objects map[string]string) *RunFacts {
	return &RunFacts{Objects: objects, Pods: []PodGroup{{Owner: "RayJob/j", Group: "g", Pods: pods, MaxPods: pods, GPUsPerPod: 8}}}
}

// Runs are compared by name: equal objects and warnings are unchanged, a
// new run diffs against an empty one and a removed run against nothing,
// objects and facts by key, entrypoints of jobs on both sides only.
func TestDiff(t *testing.T) {
	const idle, upload = "p.yaml: 1 nodes will sit idle", "p.yaml: launch.codeSource: is upload"
	obj := map[string]string{"RayJob/j": "{}", "Deployment/d": "{}", "Deployment/e": "{}"}
	cases := []struct {
		name     string
		old, cur Render
		check    func(t *testing.T, s *Summary)
	}{
		{"equal objects and warnings", Render{"r": {Objects: map[string]string{"A/a": "1"}, Warnings: []string{idle}}}, Render{"r": {Objects: map[string]string{"A/a": "1"}, Warnings: []string{idle}}},
			func(t *testing.T, s *Summary) {
				assert.Empty(t, s.Runs)
				assert.Equal(t, 1, s.Unchanged)
			}},
		{"a warning alone is a change", Render{"r": {Objects: map[string]string{"A/a": "1"}, Warnings: []string{upload}}}, Render{"r": {Objects: map[string]string{"A/a": "1"}, Warnings: []string{idle}}},
			func(t *testing.T, s *Summary) {
				require.Len(t, s.Runs, 1)
				assert.Equal(t, Changed, s.Runs[0].Status)
				assert.Empty(t, s.Runs[0].ObjectsChanged)
				assert.Equal(t, []string{idle}, s.Runs[0].WarningsAdded)
				assert.Equal(t, []string{upload}, s.Runs[0].WarningsResolved)
			}},
		{"a new run", Render{"old": gpuRun(1, nil)}, Render{"old": gpuRun(1, nil), "r": func() *RunFacts {
			r := gpuRun(2, obj)
			r.Entrypoints = map[string]string{"RayJob/j": "python x.py"}
			return r
		}()},
			func(t *testing.T, s *Summary) {
				require.Len(t, s.Runs, 1)
				d := s.Runs[0]
				assert.Equal(t, Added, d.Status)
				assert.Equal(t, Totals{}, d.Before)
				assert.Equal(t, Totals{Nodes: 2, GPUs: 16}, d.After)
				assert.Equal(t, []string{"Deployment/d", "Deployment/e", "RayJob/j"}, d.ObjectsAdded)
				assert.Equal(t, []string{"Deployment ×2", "RayJob ×1"}, d.KindsAdded)
				assert.Empty(t, d.Entrypoints, "a new job's entrypoint is in its object")
				assert.Equal(t, Totals{Nodes: 1, GPUs: 8}, s.Before)
				assert.Equal(t, Totals{Nodes: 3, GPUs: 24}, s.After)
				assert.Equal(t, 1, s.Unchanged)
			}},
		{"a removed run", Render{"r": gpuRun(2, obj)}, Render{},
			func(t *testing.T, s *Summary) {
				require.Len(t, s.Runs, 1)
				d := s.Runs[0]
				assert.Equal(t, Removed, d.Status)
				assert.Equal(t, Totals{Nodes: 2, GPUs: 16}, d.Before)
				assert.Equal(t, Totals{}, d.After)
				assert.Equal(t, []string{"Deployment ×2", "RayJob ×1"}, d.KindsRemoved)
				assert.Empty(t, d.Lifecycle, "a removed run is not stopped")
			}},
		{"objects, images and facts by key", Render{"r": {
			Objects: map[string]string{"A/a": "1", "A/b": "1"}, Images: []string{"i1", "i2"},
			Scheduling: map[string]string{"k1": "x", "k2": "y"},
		}}, Render{"r": {
			Objects: map[string]string{"A/b": "2", "A/c": "1"}, Images: []string{"i2", "i3"},
			Scheduling: map[string]string{"k2": "z", "k3": "w", "RayJob/j admission": "queued: q"},
		}},
			func(t *testing.T, s *Summary) {
				require.Len(t, s.Runs, 1)
				d := s.Runs[0]
				assert.Equal(t, []string{"A/c"}, d.ObjectsAdded)
				assert.Equal(t, []string{"A/a"}, d.ObjectsRemoved)
				assert.Equal(t, []string{"A/b"}, d.ObjectsChanged)
				assert.Equal(t, []string{"i1"}, d.ImagesRemoved)
				assert.Equal(t, []string{"i3"}, d.ImagesAdded)
				assert.Equal(t, []FieldChange{{"RayJob/j admission", "", "queued: q"}, {"k1", "x", ""}, {"k2", "y", "z"}, {"k3", "", "w"}}, d.Scheduling)
				assert.Equal(t, []string{"RayJob/j: queued: q"}, d.Admission)
			}},
		{"entrypoints of jobs on both sides", Render{"r": {Objects: map[string]string{"A/a": "1"}, Entrypoints: map[string]string{"J/a": "x\n", "J/b": "same"}}},
			Render{"r": {Objects: map[string]string{"A/a": "2"}, Entrypoints: map[string]string{"J/a": "y\n", "J/b": "same", "J/c": "new"}}},
			func(t *testing.T, s *Summary) {
				require.Len(t, s.Runs, 1)
				assert.Equal(t, []EntrypointDiff{{Job: "J/a", Diff: "@@ -1 +1 @@\n-x\n+y\n", Words: []string{"- x", "+ y"}}}, s.Runs[0].Entrypoints)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, Diff(tc.old, tc.cur)) })
	}
}

// An entrypoint diff is its hunks with one line of context, a changed
// last line a change (not a missing newline), and the words removed and
// added, so one override on a long driver line reads as that override.
func TestEntrypointDiff(t *testing.T) {
	long := "python -u examples/run_grpo.py --config examples/configs/recipes/llm/grpo-nano-v2-12b-2n8g-fsdp2tp1.yaml checkpointing.checkpoint_dir=/mnt/nfs/checkpoints/alice/grpo logger.wandb_enabled=false policy.model_name=nvidia/NVIDIA-Nemotron-Nano-12B-v2"
	cases := []struct {
		name, before, after, diff string
		words                     []string
	}{
		{"one added override", long, strings.Replace(long, "logger.wandb_enabled=false", "logger.wandb_enabled=false grpo.max_num_steps=10", 1),
			"", []string{"+ grpo.max_num_steps=10"}},
		{"a changed last line without a newline", "a\nb", "a\nc", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", []string{"- b", "+ c"}},
		{"one line of context", "1\n2\n3\n4\n5\n", "1\n2\nX\n4\n5\n", "@@ -2,3 +2,3 @@\n 2\n-3\n+X\n 4\n", []string{"- 3", "+ X"}},
		{"words replaced and added", "a b c", "a x c d", "", []string{"- b", "+ x", "+ d"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.diff != "" {
				assert.Equal(t, tc.diff, lineDiff(tc.before, tc.after))
			}
			assert.Equal(t, tc.words, wordDiff(tc.before, tc.after))
		})
	}
}

// TestFoldedEntrypointIsOneLine: the YAML encoder (sigs.k8s.io/yaml, as
// Helm's toYaml) folds a long entrypoint line over several lines of the
// manifest; the entrypoint diff is of the decoded string, so a change at
// the end of that line is one changed shell line, and the fold's
// continuation is not shown as a line of its own.
func TestFoldedEntrypointIsOneLine(t *testing.T) {
	job := func(ep string) Render {
		doc := "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec:\n  entrypoint: \"" + ep + "\"\n"
		r, err := Parse("run", "run.yaml", []byte(doc))
		require.NoError(t, err)
		return Render{"run": r}
	}
	long := "set -eu\\ncd /x \\npython run.py " + strings.Repeat("a.b=c ", 20)
	// Folded as the encoder writes it: a line break inside a double-quoted
	// scalar is a space.
	folded := strings.Replace(long, "a.b=c a.b=c", "a.b=c\n    a.b=c", 3)
	s := Diff(job(folded+"\\n"), job(long+"x=1\\n"))
	require.Len(t, s.Runs, 1)
	require.Len(t, s.Runs[0].Entrypoints, 1)
	d := s.Runs[0].Entrypoints[0].Diff
	assert.Equal(t, 1, strings.Count(d, "\n-"), d)
	assert.Equal(t, 1, strings.Count(d, "\n+"), d)
	assert.Contains(t, d, "\n+python run.py "+strings.Repeat("a.b=c ", 20)+"x=1\n")
}

// A level rises and a run moves only when it had a before: a new run is
// judged whole.
func TestLevelRoseAndNamespaceChanged(t *testing.T) {
	cases := []struct {
		name        string
		d           RunDiff
		rose, moved bool
	}{
		{"baseline to privileged", RunDiff{Status: Changed, PodSecurityBefore: "baseline", PodSecurityAfter: "privileged"}, true, false},
		{"restricted to baseline", RunDiff{Status: Changed, PodSecurityBefore: "restricted", PodSecurityAfter: "baseline"}, true, false},
		{"privileged to baseline", RunDiff{Status: Changed, PodSecurityBefore: "privileged", PodSecurityAfter: "baseline"}, false, false},
		{"a new privileged run", RunDiff{Status: Added, PodSecurityAfter: "privileged", NamespacesAfter: []string{"a"}}, false, false},
		{"another namespace", RunDiff{Status: Changed, NamespacesBefore: []string{"a"}, NamespacesAfter: []string{"a", "b"}}, false, true},
		{"the same namespaces", RunDiff{Status: Changed, NamespacesBefore: []string{"a", "b"}, NamespacesAfter: []string{"a", "b"}}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.rose, tc.d.LevelRose())
			assert.Equal(t, tc.moved, tc.d.NamespaceChanged())
		})
	}
}
