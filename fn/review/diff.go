package review

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// RunChange is what changed in one run.
type RunChange struct {
	Run                      string
	Added, Removed           bool // the whole run
	NodesOld, NodesNew       int64
	GPUsOld, GPUsNew         int64
	ImagesOld, ImagesNew     []string
	ObjectsAdded             []string
	ObjectsRemoved           []string
	DRAAdded, DRARemoved     []string
	SchedAdded, SchedRemoved []string
	// EntrypointDiffs: RayJob name -> unified line diff.
	EntrypointDiffs map[string]string
}

// Summary is a review of OLD → NEW.
type Summary struct {
	Changed   []RunChange
	Unchanged int
}

// Diff compares two sets of run facts.
func Diff(old, cur map[string]*Facts) Summary {
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range cur {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var s Summary
	for _, n := range sorted {
		o, c := old[n], cur[n]
		rc := RunChange{Run: n, EntrypointDiffs: map[string]string{}}
		switch {
		case o == nil:
			rc.Added, o = true, &Facts{Entrypoints: map[string]string{}}
		case c == nil:
			rc.Removed, c = true, &Facts{Entrypoints: map[string]string{}}
		}
		rc.NodesOld, rc.NodesNew, rc.GPUsOld, rc.GPUsNew = o.Nodes, c.Nodes, o.GPUs, c.GPUs
		if !equal(o.Images, c.Images) {
			rc.ImagesOld, rc.ImagesNew = o.Images, c.Images
		}
		rc.ObjectsAdded, rc.ObjectsRemoved = setDiff(c.Objects, o.Objects), setDiff(o.Objects, c.Objects)
		rc.DRAAdded, rc.DRARemoved = setDiff(c.DRA, o.DRA), setDiff(o.DRA, c.DRA)
		rc.SchedAdded, rc.SchedRemoved = setDiff(c.Scheduler, o.Scheduler), setDiff(o.Scheduler, c.Scheduler)
		for job, ep := range c.Entrypoints {
			if old, ok := o.Entrypoints[job]; ok && old != ep {
				rc.EntrypointDiffs[job] = lineDiff(old, ep)
			}
		}
		if rc.empty() {
			s.Unchanged++
			continue
		}
		s.Changed = append(s.Changed, rc)
	}
	return s
}

func (rc RunChange) empty() bool {
	return !rc.Added && !rc.Removed && rc.NodesOld == rc.NodesNew && rc.GPUsOld == rc.GPUsNew &&
		rc.ImagesOld == nil && rc.ImagesNew == nil && len(rc.ObjectsAdded)+len(rc.ObjectsRemoved)+
		len(rc.DRAAdded)+len(rc.DRARemoved)+len(rc.SchedAdded)+len(rc.SchedRemoved)+len(rc.EntrypointDiffs) == 0
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// setDiff is a minus b, in a's order.
func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func lineDiff(a, b string) string {
	s, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a + "\n"), B: difflib.SplitLines(b + "\n"), Context: 1,
	})
	return s
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func arrow(o, n int64) string {
	if o == n {
		return fmt.Sprintf("%d (unchanged)", n)
	}
	return fmt.Sprintf("%d → %d (%+d)", o, n, n-o)
}

// Text renders the summary for a terminal.
func (s Summary) Text() string {
	var b strings.Builder
	for _, rc := range s.Changed {
		state := ""
		if rc.Added {
			state = " (new run)"
		} else if rc.Removed {
			state = " (removed run)"
		}
		fmt.Fprintf(&b, "run %s%s\n", rc.Run, state)
		fmt.Fprintf(&b, "  nodes: %s\n", arrow(rc.NodesOld, rc.NodesNew))
		fmt.Fprintf(&b, "  GPUs:  %s\n", arrow(rc.GPUsOld, rc.GPUsNew))
		if rc.ImagesOld != nil || rc.ImagesNew != nil {
			fmt.Fprintf(&b, "  images: %s → %s\n", strings.Join(rc.ImagesOld, ", "), strings.Join(rc.ImagesNew, ", "))
		}
		list := func(title, sign string, xs []string) {
			for _, x := range xs {
				fmt.Fprintf(&b, "  %s %s %s\n", title, sign, x)
			}
		}
		list("object", "+", rc.ObjectsAdded)
		list("object", "-", rc.ObjectsRemoved)
		list("dra", "+", rc.DRAAdded)
		list("dra", "-", rc.DRARemoved)
		list("scheduler", "+", rc.SchedAdded)
		list("scheduler", "-", rc.SchedRemoved)
		for _, job := range sortedKeys(rc.EntrypointDiffs) {
			fmt.Fprintf(&b, "  entrypoint of RayJob/%s:\n", job)
			for _, l := range strings.Split(strings.TrimRight(rc.EntrypointDiffs[job], "\n"), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	fmt.Fprintf(&b, "%d run(s) changed, %d unchanged\n", len(s.Changed), s.Unchanged)
	return b.String()
}

// Markdown renders the summary for a pull-request comment.
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### nemo-rl-krm: %d run(s) changed, %d unchanged\n", len(s.Changed), s.Unchanged)
	for _, rc := range s.Changed {
		state := ""
		if rc.Added {
			state = " (new run)"
		} else if rc.Removed {
			state = " (removed run)"
		}
		fmt.Fprintf(&b, "\n#### `%s`%s\n\n| | before | after |\n|---|---|---|\n", rc.Run, state)
		fmt.Fprintf(&b, "| nodes | %d | %d |\n| GPUs | %d | %d |\n", rc.NodesOld, rc.NodesNew, rc.GPUsOld, rc.GPUsNew)
		if rc.ImagesOld != nil || rc.ImagesNew != nil {
			fmt.Fprintf(&b, "| images | `%s` | `%s` |\n", strings.Join(rc.ImagesOld, "`, `"), strings.Join(rc.ImagesNew, "`, `"))
		}
		list := func(title, sign string, xs []string) {
			for _, x := range xs {
				fmt.Fprintf(&b, "- %s %s `%s`\n", title, sign, x)
			}
		}
		b.WriteString("\n")
		list("object", "added", rc.ObjectsAdded)
		list("object", "removed", rc.ObjectsRemoved)
		list("DRA", "added", rc.DRAAdded)
		list("DRA", "removed", rc.DRARemoved)
		list("scheduler", "added", rc.SchedAdded)
		list("scheduler", "removed", rc.SchedRemoved)
		for _, job := range sortedKeys(rc.EntrypointDiffs) {
			fmt.Fprintf(&b, "\nEntrypoint of `RayJob/%s`:\n\n```diff\n%s```\n", job, rc.EntrypointDiffs[job])
		}
	}
	return b.String()
}
