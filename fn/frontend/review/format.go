package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// none stands for an absent value.
const none = "(none)"

// Text renders the summary for a terminal or a CI log: one block per run
// that changed, then one line for the unchanged runs and one for the total.
func (s *Summary) Text() string {
	var b strings.Builder
	for _, d := range s.Runs {
		fmt.Fprintf(&b, "%s: %s\n", safetext.Inline(d.Name), d.Status)
		row := func(label, value string) {
			fmt.Fprintf(&b, "  %-11s %s\n", label, safetext.Inline(value))
		}
		rows := func(label string, values []string) {
			for i, v := range values {
				if i > 0 {
					label = ""
				}
				row(label, v)
			}
		}
		row("GPU nodes", arrow(d.Before.Nodes, d.After.Nodes))
		row("GPUs", arrow(d.Before.GPUs, d.After.GPUs))
		if d.BeforeCeiling != d.Before || d.AfterCeiling != d.After {
			row("autoscaling", "up to "+arrowText(ceilingText(d.BeforeCeiling), ceilingText(d.AfterCeiling)))
		}
		rows("admission", d.Admission)
		if d.Lifecycle != "" {
			row("lifecycle", d.Lifecycle)
		}
		rows("started run", d.StartedEdits)
		// A started Kueue run's pod sets changed: it restarts from step 0.
		rows("restart", d.StartedRestarts)
		rows("image", imageLines(d))
		var objs []string
		for _, o := range d.ObjectsAdded {
			objs = append(objs, "+ "+o)
		}
		for _, o := range d.ObjectsRemoved {
			objs = append(objs, "- "+o)
		}
		for _, o := range d.ObjectsChanged {
			objs = append(objs, "~ "+o)
		}
		rows("objects", objs)
		rows("security", d.SecurityLines())
		rows("scheduling", changeLines(d.Scheduling))
		rows("preemption", d.Preemption)
		rows("DRA", changeLines(d.DRA))
		rows("warnings", warningLines(d))
		for _, e := range d.Entrypoints {
			row("entrypoint", e.Job)
			rows("  words", e.Words)
			for _, l := range strings.Split(strings.TrimRight(e.Diff, "\n"), "\n") {
				fmt.Fprintf(&b, "  %-11s   %s\n", "", safetext.Inline(l))
			}
		}
	}
	if s.Unchanged > 0 || len(s.Runs) == 0 {
		fmt.Fprintf(&b, "%s unchanged\n", plural(s.Unchanged, "run"))
	}
	fmt.Fprintf(&b, "total: GPU nodes %s, GPUs %s\n", arrow(s.Before.Nodes, s.After.Nodes), arrow(s.Before.GPUs, s.After.GPUs))
	return b.String()
}

// Markdown renders the summary as a pull-request comment: the totals, the
// runs whose security or scope changed named first, then a table per run
// that changed (security and scope first, then cost, then the rest: see
// order), its entrypoint changes as fenced diffs.
func (s *Summary) Markdown() string {
	text, _ := s.MarkdownWithin(0, "")
	return text
}

// MarkdownWithin is Markdown cut to at most limit bytes (0: no limit), for
// a comment box with a size limit (GitHub refuses comments over 65,536
// characters): whole run tables are left out from the end of the order,
// and a last line counts them and points at full, where the uncut text is
// (a CI artifact). left is the number of runs left out.
func (s *Summary) MarkdownWithin(limit int, full string) (text string, left int) {
	runs := s.order()
	var security, images, scheduling []string
	added := 0
	for _, d := range runs {
		switch d.rank() {
		case rankSecurity:
			security = append(security, code(d.Name))
		case rankImages:
			images = append(images, code(d.Name))
		}
		if d.Status == Changed && len(d.Scheduling) > 0 {
			scheduling = append(scheduling, code(d.Name))
		}
		if d.Status != Changed {
			added++
		}
	}
	var head strings.Builder
	head.WriteString("### nrl-k8s diff\n\n")
	fmt.Fprintf(&head, "Total: GPU nodes **%s**, GPUs **%s**; %s, %s unchanged.\n",
		arrow(s.Before.Nodes, s.After.Nodes), arrow(s.Before.GPUs, s.After.GPUs),
		plural(len(s.Runs), "run")+" changed", plural(s.Unchanged, "run"))
	var rest strings.Builder
	if n := len(images); n > 0 {
		fmt.Fprintf(&rest, "\nImages change in %s: %s.\n", plural(n, "existing run"), names(images, maxNamed, -1))
	}
	if added > 0 {
		fmt.Fprintf(&rest, "\n%s new or removed, each judged whole.\n", plural(added, "run"))
	}
	if n := len(scheduling); n > 0 {
		fmt.Fprintf(&rest, "\nQueue, priority or topology change in %s (who waits, who is preempted): %s.\n", plural(n, "run"), names(scheduling, maxNamed, -1))
	}
	if n := len(security); n > 0 {
		// Every one by name, as far as the comment holds them: a summary
		// may drop detail, never which runs change security or scope.
		room := -1
		if limit > 0 {
			room = max(0, limit-head.Len()-rest.Len()-maxNote)
		}
		fmt.Fprintf(&head, "\nSecurity, scope or privileges change in %s: %s.\n", plural(n, "run"), names(security, len(security), room))
	}
	head.WriteString(rest.String())
	blocks := make([]string, len(runs))
	for i, d := range runs {
		blocks[i] = d.markdownBlock()
	}
	return cut(head.String(), blocks, limit, full)
}

// maxNote bounds the line cut adds and the sentence around a list of names.
const maxNote = 400

// names joins xs, at most most of them and at most room bytes (-1: no
// bound), with the count of the others.
func names(xs []string, most, room int) string {
	var b strings.Builder
	for i, x := range xs {
		more := fmt.Sprintf(", and %d more", len(xs)-i)
		if i == most || room >= 0 && b.Len()+len(x)+2+len(more) > room {
			if i == 0 {
				return fmt.Sprintf("%d runs (the full summary names them)", len(xs))
			}
			return b.String() + more
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// cut joins head and as many blocks as fit in limit with the note saying
// what was left out.
func cut(head string, blocks []string, limit int, full string) (string, int) {
	all := head + strings.Join(blocks, "")
	if limit <= 0 || len(all) <= limit {
		return all, 0
	}
	note := func(n, size int) string {
		where := "run `nrl-k8s diff` for the full summary"
		if full != "" {
			where = "the full summary is " + code(full)
		}
		return fmt.Sprintf("\n_%s left out here (%d characters; a comment holds at most %d): %s._\n", plural(n, "run"), size, limit, where)
	}
	// Cut in the reviewer's order, never refilled with smaller tables.
	out := head
	for i, b := range blocks {
		rest := len(blocks) - i
		room := 0
		if rest > 1 {
			room = len(note(rest-1, 1<<30))
		}
		if len(out)+len(b)+room > limit {
			size := 0
			for _, r := range blocks[i:] {
				size += len(r)
			}
			return out + note(rest, size), rest
		}
		out += b
	}
	return out, 0
}

// maxNamed bounds the run names the comment's first lines list, but for
// security and scope changes, which are all named.
const maxNamed = 20

// Ranks place a run in the comment, most important first.
const (
	// rankSecurity: a run the base has whose security, scope or
	// privileges change (a new run is judged whole, in rankNew).
	rankSecurity = iota
	// rankImages: a run whose images change (an image bump).
	rankImages
	// rankNew: a new or removed run.
	rankNew
	// rankRest: the rest (cost, scheduling, entrypoints); the runs whose
	// queue, priority or topology change are named in the first lines.
	rankRest
)

func (d RunDiff) rank() int {
	switch {
	case d.Status != Changed:
		return rankNew
	case len(d.Security)+len(d.PrivilegesAdded)+len(d.PrivilegesRemoved)+len(d.KindsAdded)+len(d.KindsRemoved) > 0,
		d.LevelRose(), d.NamespaceChanged():
		return rankSecurity
	case len(d.ImagesAdded)+len(d.ImagesRemoved) > 0:
		return rankImages
	}
	return rankRest
}

// order is the runs by rank, then by how many GPUs they move, then name.
func (s *Summary) order() []RunDiff {
	runs := slices.Clone(s.Runs)
	moved := func(d RunDiff) int64 {
		n := d.After.GPUs - d.Before.GPUs
		if n < 0 {
			return -n
		}
		return n
	}
	slices.SortStableFunc(runs, func(a, b RunDiff) int {
		return cmp.Or(cmp.Compare(a.rank(), b.rank()), cmp.Compare(moved(b), moved(a)), cmp.Compare(a.Name, b.Name))
	})
	return runs
}

// markdownBlock is one run's table, warnings and entrypoint diffs.
func (d RunDiff) markdownBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n#### %s (%s)\n\n", code(d.Name), d.Status)
	b.WriteString("| | before | after |\n|---|---|---|\n")
	row := func(label, before, after string) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(label), cell(before), cell(after))
	}
	row("GPU nodes", fmt.Sprint(d.Before.Nodes), after(d.Before.Nodes, d.After.Nodes))
	row("GPUs", fmt.Sprint(d.Before.GPUs), after(d.Before.GPUs, d.After.GPUs))
	if d.BeforeCeiling != d.Before || d.AfterCeiling != d.After {
		b, a := ceilingText(d.BeforeCeiling), ceilingText(d.AfterCeiling)
		if a == b {
			a = "unchanged"
		}
		row("autoscaling up to", b, a)
	}
	for _, a := range d.Admission {
		ref, state, _ := strings.Cut(a, ": ")
		row("admission: "+code(ref), "", plain(state))
	}
	if d.Lifecycle != "" {
		row("lifecycle", "", plain(d.Lifecycle))
	}
	for _, e := range d.StartedEdits {
		ref, fields, _ := strings.Cut(e, ": ")
		row("started run, never applied: "+code(ref), "", plain(fields))
	}
	for _, e := range d.StartedRestarts {
		ref, fields, _ := strings.Cut(e, ": ")
		row("started Kueue run, restarts it from step 0: "+code(ref), "", plain(fields))
	}
	if len(d.ImagesRemoved)+len(d.ImagesAdded) > 0 {
		row("images", codes(d.ImagesRemoved), codes(d.ImagesAdded))
	}
	if len(d.ObjectsRemoved)+len(d.ObjectsAdded) > 0 {
		row("objects removed / new", codes(d.ObjectsRemoved), codes(d.ObjectsAdded))
	}
	if len(d.ObjectsChanged) > 0 {
		row("objects changed", "", codes(d.ObjectsChanged))
	}
	row("security: pod security level", codeOrNone(d.PodSecurityBefore), codeOrNone(d.PodSecurityAfter)+levelNote(d))
	row("scope: namespaces", codesOrNone(d.NamespacesBefore), codesOrNone(d.NamespacesAfter)+nsNote(d))
	if len(d.KindsAdded)+len(d.KindsRemoved) > 0 {
		row("scope: objects by kind removed / new", codes(d.KindsRemoved), codes(d.KindsAdded))
	}
	if len(d.PrivilegesAdded)+len(d.PrivilegesRemoved) > 0 {
		row("security: privileges dropped / gained", codes(d.PrivilegesRemoved), codes(d.PrivilegesAdded))
	}
	for _, c := range d.Security {
		ref, field, _ := strings.Cut(c.Key, " ")
		row("security: "+code(ref)+" "+plain(field), codeOrNone(c.Before), codeOrNone(c.After))
	}
	for _, section := range []struct {
		name    string
		changes []FieldChange
	}{{"scheduling", d.Scheduling}, {"DRA", d.DRA}} {
		for _, c := range section.changes {
			ref, field, _ := strings.Cut(c.Key, " ")
			row(section.name+": "+code(ref)+" "+plain(field), codeOrNone(c.Before), codeOrNone(c.After))
		}
	}
	if len(d.Preemption) > 0 {
		b.WriteString("\nPreemption:\n\n")
		for _, l := range d.Preemption {
			fmt.Fprintf(&b, "- %s\n", plain(l))
		}
	}
	if len(d.WarningsAdded)+len(d.WarningsResolved) > 0 {
		b.WriteString("\nWarnings:\n\n")
		for _, w := range warningLines(d) {
			fmt.Fprintf(&b, "- %s\n", code(w))
		}
	}
	for _, e := range d.Entrypoints {
		if len(e.Words) > 0 {
			fmt.Fprintf(&b, "\nEntrypoint of %s, words changed: %s\n", code(e.Job), codes(e.Words))
		}
		body := inlineLines(e.Diff)
		fence := fenceFor(body)
		fmt.Fprintf(&b, "\nEntrypoint of %s:\n\n%sdiff\n%s%s\n", code(e.Job), fence, body, fence)
	}
	return b.String()
}

// SecurityLines are the security and scope section of a run's text block:
// the Pod Security level and namespaces (always, so a reviewer sees the
// run's scope), new and removed objects by kind, then every security or
// scope fact that changed, by name.
func (d RunDiff) SecurityLines() []string {
	out := []string{
		"pod security level " + transition(d.PodSecurityBefore, d.PodSecurityAfter) + levelNote(d),
		"namespaces " + transition(strings.Join(d.NamespacesBefore, ", "), strings.Join(d.NamespacesAfter, ", ")) + nsNote(d),
	}
	for _, k := range d.KindsAdded {
		out = append(out, "+ "+k)
	}
	for _, k := range d.KindsRemoved {
		out = append(out, "- "+k)
	}
	for _, p := range d.PrivilegesAdded {
		out = append(out, "privilege + "+p)
	}
	for _, p := range d.PrivilegesRemoved {
		out = append(out, "privilege - "+p)
	}
	return append(out, changeLines(d.Security)...)
}

func transition(before, after string) string {
	if before == after {
		return orNone(after)
	}
	return orNone(before) + " → " + orNone(after)
}

func levelNote(d RunDiff) string {
	if d.LevelRose() {
		return " (RISES: needs a more privileged namespace)"
	}
	return ""
}

func nsNote(d RunDiff) string {
	if d.NamespaceChanged() {
		return " (MOVES)"
	}
	return ""
}

// warningLines are the new warnings (+) and the resolved ones (-).
func warningLines(d RunDiff) []string {
	var out []string
	for _, w := range d.WarningsAdded {
		out = append(out, "+ "+w)
	}
	for _, w := range d.WarningsResolved {
		out = append(out, "- "+w)
	}
	return out
}

func arrow(before, after int64) string {
	if before == after {
		return fmt.Sprint(after)
	}
	return fmt.Sprintf("%d → %d (%+d)", before, after, after-before)
}

// after is the table's after cell: the value and, when it moved, the delta.
func after(before, after int64) string {
	if before == after {
		return fmt.Sprint(after)
	}
	return fmt.Sprintf("%d (%+d)", after, after-before)
}

func imageLines(d RunDiff) []string {
	if len(d.ImagesRemoved) == 1 && len(d.ImagesAdded) == 1 {
		return []string{d.ImagesRemoved[0] + " → " + d.ImagesAdded[0]}
	}
	var out []string
	for _, i := range d.ImagesRemoved {
		out = append(out, "- "+i)
	}
	for _, i := range d.ImagesAdded {
		out = append(out, "+ "+i)
	}
	return out
}

func changeLines(cs []FieldChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s: %s → %s", c.Key, orNone(c.Before), orNone(c.After)))
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return none
	}
	return v
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// code is an inline code span holding s as data: a control character or
// newline is escaped (fn/support/safetext), so the value cannot end the table row
// or start a line of its own (`<!--`, a fake heading); inside a code span
// `<`, `*`, `@` are literal, so no HTML comment, emphasis or mention. A
// backtick (no Kubernetes name or image has one) would end the span early,
// so it is replaced.
func code(s string) string {
	return "`" + strings.ReplaceAll(safetext.Inline(s), "`", "'") + "`"
}

// plain is text outside a code span: escaped as data, and every markdown
// punctuation character backslash-escaped, so it renders as itself.
func plain(s string) string {
	var b strings.Builder
	for _, r := range safetext.Inline(s) {
		if strings.ContainsRune("\\`*_[]<>|@&~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inlineLines escapes each line of a multi-line value as data, keeping its
// line breaks.
func inlineLines(s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = safetext.Inline(p)
	}
	return strings.Join(parts, "\n")
}

func codes(xs []string) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, code(x))
	}
	return strings.Join(parts, "<br>")
}

func codesOrNone(xs []string) string {
	if len(xs) == 0 {
		return "_none_"
	}
	return codes(xs)
}

func codeOrNone(v string) string {
	if v == "" {
		return "_none_"
	}
	return code(v)
}

// cell escapes the table separator.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// fenceFor is a code fence longer than any backtick run in s, so an
// entrypoint that itself contains ``` cannot close the block.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// ceilingText is the autoscaling ceiling of a run's GPU pods.
func ceilingText(t Totals) string {
	if t.Nodes > capacity.MaxNodes {
		return "no ceiling (maxReplicas unset)"
	}
	return fmt.Sprintf("%d GPU nodes, %d GPUs", t.Nodes, t.GPUs)
}

func arrowText(before, after string) string {
	if before == after {
		return before
	}
	return before + " → " + after
}
