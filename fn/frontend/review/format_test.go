package review

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
)

// scaled is a changed run of 2 GPU nodes whose ceiling is 2 before and
// after on each side as given.
func scaled(before, after Totals) RunDiff {
	two := Totals{Nodes: 2, GPUs: 16}
	return RunDiff{Name: "r", Status: Changed, Before: two, After: two, BeforeCeiling: before, AfterCeiling: after}
}

// Text is one block per run that changed, then the unchanged runs and the
// total; moved counts carry their delta, the autoscaling ceiling is
// beside the count (never as it), one image replaced reads as an arrow.
func TestText(t *testing.T) {
	words := EntrypointDiff{Job: "RayJob/j", Diff: "-a\n+a x=1\n", Words: []string{"+ x=1"}}
	cases := []struct {
		name string
		s    Summary
		want []string // each in the text
		not  string
	}{
		{"nothing changed", Summary{Unchanged: 4, Before: Totals{116, 464}, After: Totals{116, 464}},
			[]string{"4 runs unchanged\ntotal: GPU nodes 116, GPUs 464\n"}, "→"},
		{"a removed run", Summary{Runs: []RunDiff{{Name: "r", Status: Removed, Before: Totals{64, 256}}}, Before: Totals{116, 464}, After: Totals{4, 16}},
			[]string{"r: removed run\n  GPU nodes   64 → 0 (-64)\n", "total: GPU nodes 116 → 4 (-112), GPUs 464 → 16 (-448)\n"}, "unchanged"},
		{"autoscaling", Summary{Runs: []RunDiff{scaled(Totals{2, 16}, Totals{6, 48})}},
			[]string{"  GPU nodes   2\n", "autoscaling up to 2 GPU nodes, 16 GPUs → 6 GPU nodes, 48 GPUs\n"}, ""},
		{"no ceiling", Summary{Runs: []RunDiff{scaled(Totals{2, 16}, Totals{capacity.MaxNodes + 1, 8})}},
			[]string{"→ no ceiling (maxReplicas unset)\n"}, ""},
		{"no autoscaling", Summary{Runs: []RunDiff{scaled(Totals{2, 16}, Totals{2, 16})}}, []string{"r: changed\n"}, "autoscaling"},
		{"one image replaced", Summary{Runs: []RunDiff{{Name: "r", Status: Changed, ImagesRemoved: []string{"a"}, ImagesAdded: []string{"b"}}}},
			[]string{"  image       a → b\n"}, ""},
		{"images added", Summary{Runs: []RunDiff{{Name: "r", Status: Changed, ImagesAdded: []string{"b", "c"}}}},
			[]string{"  image       + b\n              + c\n"}, ""},
		{"objects and facts", Summary{Runs: []RunDiff{{Name: "r", Status: Changed, ObjectsAdded: []string{"A/n"}, ObjectsRemoved: []string{"A/o"}, ObjectsChanged: []string{"A/c"},
			Scheduling: []FieldChange{{Key: "RayJob/j queue", Before: "a"}}}}},
			[]string{"  objects     + A/n\n              - A/o\n              ~ A/c\n", "  scheduling  RayJob/j queue: a → (none)\n"}, ""},
		{"entrypoint words and lines", Summary{Runs: []RunDiff{{Name: "r", Status: Changed, Entrypoints: []EntrypointDiff{words}}}},
			[]string{"  entrypoint  RayJob/j\n    words     + x=1\n                -a\n                +a x=1\n"}, ""},
		{"warnings new and resolved", Summary{Runs: []RunDiff{{Name: "r", Status: Changed, WarningsAdded: []string{"w1"}, WarningsResolved: []string{"w0"}}}},
			[]string{"  warnings    + w1\n              - w0\n"}, ""},
		{"a control character is escaped", Summary{Runs: []RunDiff{{Name: "r\x1b[2J", Status: Changed}}}, []string{"r"}, "\x1b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.s.Text()
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
			if tc.not != "" {
				assert.NotContains(t, text, tc.not)
			}
		})
	}
}

// The comment's first lines name the runs by what changed; each table
// escapes what it quotes: a value cannot end its cell or code span, an
// entrypoint holding ``` cannot close its fence.
func TestMarkdown(t *testing.T) {
	cases := []struct {
		name string
		runs []RunDiff
		want []string
	}{
		{"autoscaling", []RunDiff{scaled(Totals{2, 16}, Totals{6, 48})}, []string{"| autoscaling up to | 2 GPU nodes, 16 GPUs | 6 GPU nodes, 48 GPUs |"}},
		{"autoscaling unchanged", []RunDiff{scaled(Totals{6, 48}, Totals{6, 48})}, []string{"| autoscaling up to | 6 GPU nodes, 48 GPUs | unchanged |"}},
		{"escaping", []RunDiff{{
			Name: "r", Status: Changed,
			Scheduling:  []FieldChange{{Key: "RayJob/rl-team/j queue", Before: "a|b", After: "c`d"}},
			Entrypoints: []EntrypointDiff{{Job: "RayJob/rl-team/j", Diff: "-echo ```\n+echo ok\n"}},
			Admission:   []string{"RayJob/j: queued: *q*"},
		}}, []string{
			"| scheduling: `RayJob/rl-team/j` queue | `a\\|b` | `c'd` |",
			"````diff\n-echo ```\n+echo ok\n````\n",
			"| admission: `RayJob/j` |  | queued: \\*q\\* |",
			"Queue, priority or topology change in 1 run (who waits, who is preempted): `r`.",
		}},
		{"words", []RunDiff{{Name: "r", Status: Changed, Entrypoints: []EntrypointDiff{{Job: "RayJob/j", Diff: "-a\n+a x\n", Words: []string{"+ x"}}}}},
			[]string{"\nEntrypoint of `RayJob/j`, words changed: `+ x`\n"}},
		{"warnings", []RunDiff{{Name: "r", Status: Changed, WarningsAdded: []string{"w1"}, WarningsResolved: []string{"w0"}}}, []string{"\nWarnings:\n\n- `+ w1`\n- `- w0`\n"}},
		{"first lines", []RunDiff{
			{Name: "bump", Status: Changed, ImagesAdded: []string{"i"}},
			{Name: "new", Status: Added},
			{Name: "sa", Status: Changed, Security: []FieldChange{{Key: "RayJob/j serviceAccountName", After: "admin"}}},
		}, []string{
			"Total: GPU nodes **0**, GPUs **0**; 3 runs changed, 0 runs unchanged.\n\nSecurity, scope or privileges change in 1 run: `sa`.\n\nImages change in 1 existing run: `bump`.\n\n1 run new or removed, each judged whole.\n",
			"| security: `RayJob/j` serviceAccountName | _none_ | `admin` |",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			md := (&Summary{Runs: tc.runs}).Markdown()
			for _, w := range tc.want {
				assert.Contains(t, md, w)
			}
		})
	}
}

// Runs are ordered security and scope first, then image bumps, new and
// removed runs, the rest; within a rank by the GPUs they move, then name.
func TestOrder(t *testing.T) {
	s := &Summary{Runs: []RunDiff{
		{Name: "a-rest", Status: Changed},
		{Name: "b-rest-big", Status: Changed, After: Totals{GPUs: 8}},
		{Name: "c-new", Status: Added},
		{Name: "d-image", Status: Changed, ImagesRemoved: []string{"i"}},
		{Name: "e-level", Status: Changed, PodSecurityBefore: "baseline", PodSecurityAfter: "privileged"},
		{Name: "f-kind", Status: Changed, KindsAdded: []string{"Service ×1"}},
		{Name: "g-freed", Status: Changed, Before: Totals{GPUs: 16}},
	}}
	var got []string
	for _, d := range s.order() {
		got = append(got, d.Name)
	}
	assert.Equal(t, []string{"e-level", "f-kind", "d-image", "c-new", "g-freed", "b-rest-big", "a-rest"}, got)
}

// A cut comment keeps whole tables in order, never refilled with smaller
// ones, and its last line counts what was left out and says where it is.
func TestMarkdownWithin(t *testing.T) {
	s := &Summary{Runs: []RunDiff{
		{Name: "big", Status: Changed, Before: Totals{GPUs: 8}, ObjectsChanged: []string{strings.Repeat("x", 400)}},
		{Name: "small", Status: Changed},
	}}
	whole := s.Markdown()
	cases := []struct {
		name  string
		limit int
		full  string
		left  int
		want  string
	}{
		{"no limit", 0, "", 0, whole},
		{"fits", len(whole), "", 0, whole},
		{"the last table left out", len(whole) - 1, "", 1, "_1 run left out here ("},
		{"the big table first: both left out, though the small one fits", len(whole) - 300, "", 2, "_2 runs left out here ("},
		{"the place of the rest", len(whole) - 1, "full.md", 1, "; a comment holds at most " + fmt.Sprint(len(whole)-1) + "): the full summary is `full.md`._\n"},
		{"without a file", len(whole) - 1, "", 1, "run `nrl-k8s diff` for the full summary._\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, left := s.MarkdownWithin(tc.limit, tc.full)
			assert.Equal(t, tc.left, left)
			assert.Contains(t, text, tc.want)
			if tc.limit > 0 {
				assert.LessOrEqual(t, len(text), tc.limit)
			}
		})
	}
}

// names lists at most most names within room bytes and counts the rest.
func TestNames(t *testing.T) {
	xs := []string{"`a`", "`b`", "`c`"}
	cases := []struct {
		name       string
		most, room int
		want       string
	}{
		{"all", 3, -1, "`a`, `b`, `c`"},
		{"at most two", 2, -1, "`a`, `b`, and 1 more"},
		{"room for one", 3, 19, "`a`, and 2 more"},
		{"room for none", 3, 5, "3 runs (the full summary names them)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, names(xs, tc.most, tc.room)) })
	}
}

// A fence is longer than any backtick run it holds.
func TestFenceFor(t *testing.T) {
	for in, want := range map[string]string{"": "```", "a `b` c": "```", "```": "````", "x ````` y `` z": "``````"} {
		require.Equal(t, want, fenceFor(in), in)
	}
}
