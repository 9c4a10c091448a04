package review

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/parallel"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// SecurityGate prints the security and scope section of every run whose
// render differs there from the base, and reports whether the pull request
// must be refused: a run (new and renamed ones included) whose Pod Security
// level rises, which enters a namespace, or which gains a privilege
// (privileges.go), unless the base's allow-list permits it. prAllow is the
// checkout's own allow-list: a change to it is shown, never obeyed, while
// a base is known.
func SecurityGate(stderr io.Writer, res *renderall.Result, base renderall.Base, prAllow []byte) (bool, error) {
	if base.Known {
		fmt.Fprintf(stderr, "security gate: judged against %s\n", safetext.Inline(base.From))
		showAllowChange(stderr, base.AllowData, prAllow)
	} else {
		fmt.Fprintf(stderr, "security gate: warning: %s\n", base.From)
	}
	failed := false
	for _, j := range judgeAll(res, base) {
		if j.err != nil {
			return false, j.err
		}
		if j.baseErr != nil {
			fmt.Fprintf(stderr, "%s: the base manifest is not a render (%s); judged as a new run\n", j.run, safetext.Error(j.baseErr))
		}
		showWhoWaits(stderr, j)
		d, ok := j.diff()
		if !ok {
			continue
		}
		n := j.run
		what := "security and scope"
		if d.Status == Added {
			what = "new run (or renamed: the base has no run of this name), judged whole; security and scope"
		}
		fmt.Fprintf(stderr, "%s: %s:\n", n, what)
		for _, l := range d.SecurityLines() {
			fmt.Fprintf(stderr, "  %s\n", safetext.Inline(l))
		}
		for _, refusal := range refusals(d, base.Allow) {
			failed = true
			fmt.Fprintf(stderr, "%s: refused: %s\n", n, safetext.Inline(refusal))
		}
	}
	return failed, nil
}

// showWhoWaits prints a run's changes of what decides who waits and who is
// preempted (queues, priority classes, topology): not refused, but named,
// since they move the run ahead of or behind other teams' runs.
func showWhoWaits(stderr io.Writer, j judged) {
	if j.old == nil {
		return
	}
	s := Diff(Render{j.run: j.old}, Render{j.run: j.cur})
	if len(s.Runs) == 0 || len(s.Runs[0].Scheduling) == 0 {
		return
	}
	fmt.Fprintf(stderr, "%s: scheduling (who waits, who is preempted):\n", j.run)
	for _, l := range append(changeLines(s.Runs[0].Scheduling), s.Runs[0].Preemption...) {
		fmt.Fprintf(stderr, "  %s\n", safetext.Inline(l))
	}
}

// judged is one run's render and its base's, parsed.
type judged struct {
	run      string
	cur, old *RunFacts
	// baseErr: the base's manifest is not a render (judged as new); err:
	// the run's own render is not.
	baseErr, err error
}

// diff is the run's security and scope change; false when there is none.
func (j judged) diff() (RunDiff, bool) {
	olds := Render{}
	if j.old != nil {
		olds[j.run] = j.old
	}
	s := Diff(olds, Render{j.run: j.cur})
	if len(s.Runs) == 0 {
		return RunDiff{}, false
	}
	d := s.Runs[0]
	if d.Status == Changed && len(d.Security)+len(d.KindsAdded)+len(d.KindsRemoved)+len(d.PrivilegesAdded)+len(d.PrivilegesRemoved)+len(d.StartedEdits)+len(d.StartedRestarts) == 0 && !d.LevelRose() && !d.NamespaceChanged() {
		return RunDiff{}, false
	}
	return d, true
}

// judgeAll parses, on every core, each rendered run whose manifest differs
// from the base's (equal bytes are equal facts: nothing to judge), in run
// order, so the gate over hundreds of runs costs about what rendering them
// does.
func judgeAll(res *renderall.Result, base renderall.Base) []judged {
	var todo []string
	for _, n := range res.Runs {
		if _, ok := res.Files[n]; !ok {
			continue
		}
		data := res.Whole(n)
		if b, ok := base.Manifests[n]; ok && bytes.Equal(b, data) {
			continue
		}
		todo = append(todo, n)
	}
	return parallel.Map(len(todo), func() func(int) judged {
		return func(i int) judged {
			n := todo[i]
			j := judged{run: n}
			if j.cur, j.err = Parse(n, n, res.Whole(n)); j.err != nil {
				return j
			}
			if b, ok := base.Manifests[n]; ok {
				if j.old, j.baseErr = Parse(n, n, b); j.baseErr != nil {
					j.old = nil
				}
			}
			return j
		}
	})
}

// refusals are the reasons a run's change may not merge unless the allow-list
// permits it. A new run is judged against nothing: the restricted level,
// no namespace, no privilege.
func refusals(d RunDiff, allow *renderall.Allow) []string {
	var out []string
	n, file := d.Name, renderall.AllowFile
	before := d.PodSecurityBefore
	if d.Status == Added || before == "" {
		before = string(podsecurity.Restricted)
	}
	if LevelRises(before, d.PodSecurityAfter) && !allow.PermitsLevel(n, d.PodSecurityAfter) {
		out = append(out, fmt.Sprintf("the run's Pod Security level rises from %s to %s; refused unless the base branch's %s allows it (runs.%s.podSecurity: %s), a file reviewed like code",
			before, d.PodSecurityAfter, file, n, d.PodSecurityAfter))
	}
	var entered []string
	for _, ns := range minus(d.NamespacesAfter, d.NamespacesBefore) {
		if !allow.PermitsNamespace(n, ns) {
			entered = append(entered, ns)
		}
	}
	if len(entered) > 0 {
		out = append(out, fmt.Sprintf("the run's namespaces change from [%s] to [%s]; refused unless the base branch's %s lists [%s] (runs.%s.namespaces, or default.namespaces), a file reviewed like code",
			strings.Join(d.NamespacesBefore, ", "), strings.Join(d.NamespacesAfter, ", "), file, strings.Join(entered, ", "), n))
	}
	if len(d.StartedEdits) > 0 {
		out = append(out, StartedRunRefusal(d))
	}
	if len(d.StartedRestarts) > 0 {
		out = append(out, StartedRestartRefusal(d))
	}
	var gained []string
	for _, p := range d.PrivilegesAdded {
		if !allow.PermitsPrivilege(n, p) {
			gained = append(gained, p)
		}
	}
	if len(gained) > 0 {
		out = append(out, fmt.Sprintf("the run gains %d privilege(s): %s; refused unless the base branch's %s lists them (runs.%s.privileges, or default.privileges; a trailing * matches any rest), a file reviewed like code",
			len(gained), strings.Join(gained, "; "), file, n))
	}
	return out
}

// showAllowChange prints a pull request's change to the allow-list as a
// security change: it takes effect only once merged, and whoever owns the
// cluster's namespaces approves it.
func showAllowChange(stderr io.Writer, base, pr []byte) {
	if bytes.Equal(base, pr) {
		return
	}
	fmt.Fprintf(stderr, "%s: changed by this pull request (a security change: it governs only once merged; this check obeys the base branch's copy):\n", renderall.AllowFile)
	diff := renderall.UnifiedDiff("a/"+renderall.AllowFile, "b/"+renderall.AllowFile, base, pr)
	for _, l := range renderall.Lines(diff) {
		fmt.Fprintf(stderr, "  %s\n", safetext.Inline(strings.TrimSuffix(l, "\n")))
	}
}
