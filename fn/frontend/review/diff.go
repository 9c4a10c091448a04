package review

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Status is what happened to a run.
type Status string

const (
	Changed Status = "changed"
	Added   Status = "new run"
	Removed Status = "removed run"
)

// Summary is the review of OLD → NEW.
type Summary struct {
	// Runs are the runs that changed, were added or were removed, by name.
	Runs []RunDiff
	// Unchanged counts runs present in both whose objects are all equal.
	Unchanged int
	// Before and After sum every run of each side.
	Before, After Totals
}

// RunDiff is what changed in one run. A new run diffs against an empty one,
// a removed run against nothing, so the totals say what the PR adds or frees.
type RunDiff struct {
	Name          string
	Status        Status
	Before, After Totals
	// BeforeCeiling and AfterCeiling are the totals with every autoscaling
	// group at its ceiling (equal to Before and After when nothing
	// autoscales).
	BeforeCeiling, AfterCeiling Totals
	// ImagesRemoved and ImagesAdded are the set differences of the images.
	ImagesRemoved, ImagesAdded []string
	// Objects as "Kind/name": Changed are in both with a different content.
	ObjectsAdded, ObjectsRemoved, ObjectsChanged []string
	Scheduling                                   []FieldChange
	DRA                                          []FieldChange
	// Preemption says, per priority class change, whom the run may now
	// preempt (priority.go).
	Preemption []string
	// Admission are the run's objects that do not create their pods at
	// once ("RayJob/x: queued: …"), as the run is now: their pods are
	// counted all the same.
	Admission []string
	// Security are the security and scope facts that changed, and the
	// run's Pod Security level and namespaces on each side.
	Security                            []FieldChange
	PodSecurityBefore, PodSecurityAfter string
	NamespacesBefore, NamespacesAfter   []string
	// PrivilegesAdded are privileges (privileges.go) the run has now and
	// had not; PrivilegesRemoved the reverse.
	PrivilegesAdded, PrivilegesRemoved []string
	// KindsAdded and KindsRemoved count new and removed objects by kind
	// ("Deployment +1").
	KindsAdded, KindsRemoved []string
	// Entrypoints are the line diffs of RayJobs present on both sides whose
	// entrypoint changed (a new job's entrypoint is in its object).
	Entrypoints []EntrypointDiff
	// Lifecycle says how the run's declared state changes (stopped or
	// started again by this change); "" when it does not (lifecycle.go).
	Lifecycle string
	// StartedEdits are edits of a started run KubeRay or Kueue never apply
	// to it ("RayJob/x: spec.entrypoint"); the gate refuses them.
	StartedEdits []string
	// StartedRestarts are edits of a started Kueue run that restart it
	// from step 0 ("RayJob/x: spec.rayClusterSpec.workerGroupSpecs[0].replicas");
	// the gate refuses them, saying so.
	StartedRestarts []string
	// WarningsAdded are warnings the new side has and the old one had not;
	// WarningsResolved the reverse (known only for rendered runs).
	WarningsAdded, WarningsResolved []string
}

// FieldChange is one fact whose value changed; "" means absent.
type FieldChange struct {
	Key, Before, After string
}

// EntrypointDiff is a unified line diff (hunks only) of one job.
type EntrypointDiff struct {
	Job  string
	Diff string
	// Words are the words (shell words as whitespace splits them) removed
	// ("- x") and added ("+ y"), in order: a one-override change to a
	// 300-character driver line reads as the override, not as two lines.
	Words []string
}

// EntrypointContext is the context lines around an entrypoint change: one
// is enough to place a changed flag among the driver's arguments.
const EntrypointContext = 1

// Diff compares two renders run by run.
func Diff(old, cur Render) *Summary {
	s := &Summary{Before: old.Totals(), After: cur.Totals()}
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range cur {
		names[n] = true
	}
	for _, n := range tree.SortedKeys(names) {
		o, c := old[n], cur[n]
		d := RunDiff{Name: n, Status: Changed}
		switch {
		case o == nil:
			d.Status, o = Added, &RunFacts{}
		case c == nil:
			d.Status, c = Removed, &RunFacts{}
		case equalObjects(o.Objects, c.Objects) && equalStrings(o.Warnings, c.Warnings):
			s.Unchanged++
			continue
		}
		d.Before, d.After = o.Totals(), c.Totals()
		d.BeforeCeiling, d.AfterCeiling = o.Ceiling(), c.Ceiling()
		d.ImagesRemoved, d.ImagesAdded = minus(o.Images, c.Images), minus(c.Images, o.Images)
		d.ObjectsAdded = minus(tree.SortedKeys(c.Objects), tree.SortedKeys(o.Objects))
		d.ObjectsRemoved = minus(tree.SortedKeys(o.Objects), tree.SortedKeys(c.Objects))
		for _, ref := range tree.SortedKeys(c.Objects) {
			if prev, ok := o.Objects[ref]; ok && prev != c.Objects[ref] {
				d.ObjectsChanged = append(d.ObjectsChanged, ref)
			}
		}
		d.Scheduling = fieldChanges(o.Scheduling, c.Scheduling)
		d.Preemption = preemptionLines(n, d.Scheduling, cur)
		for _, k := range tree.SortedKeys(c.Scheduling) {
			if ref, ok := strings.CutSuffix(k, " admission"); ok {
				d.Admission = append(d.Admission, ref+": "+c.Scheduling[k])
			}
		}
		d.DRA = fieldChanges(o.DRA, c.DRA)
		d.Security = fieldChanges(o.Security, c.Security)
		d.PodSecurityBefore, d.PodSecurityAfter = o.PodSecurity, c.PodSecurity
		d.NamespacesBefore, d.NamespacesAfter = o.Namespaces, c.Namespaces
		d.PrivilegesAdded, d.PrivilegesRemoved = minus(c.Privileges, o.Privileges), minus(o.Privileges, c.Privileges)
		d.KindsAdded, d.KindsRemoved = byKind(d.ObjectsAdded), byKind(d.ObjectsRemoved)
		for _, job := range tree.SortedKeys(c.Entrypoints) {
			prev, ok := o.Entrypoints[job]
			if ok && prev != c.Entrypoints[job] {
				d.Entrypoints = append(d.Entrypoints, EntrypointDiff{Job: job, Diff: lineDiff(prev, c.Entrypoints[job]), Words: wordDiff(prev, c.Entrypoints[job])})
			}
		}
		d.WarningsAdded, d.WarningsResolved = minus(c.Warnings, o.Warnings), minus(o.Warnings, c.Warnings)
		if d.Status == Changed {
			d.Lifecycle = lifecycle(o, c)
			d.StartedEdits, d.StartedRestarts = startedEdits(o, c)
		}
		s.Runs = append(s.Runs, d)
	}
	return s
}

func equalStrings(a, b []string) bool {
	return len(minus(a, b)) == 0 && len(minus(b, a)) == 0
}

func equalObjects(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// fieldChanges lists the keys whose value differs, by key.
func fieldChanges(old, cur map[string]string) []FieldChange {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var out []FieldChange
	for _, k := range tree.SortedKeys(keys) {
		if old[k] != cur[k] {
			out = append(out, FieldChange{Key: k, Before: old[k], After: cur[k]})
		}
	}
	return out
}

// minus is a \ b, in a's order; a and b are sorted, so the result is too.
func minus(a, b []string) []string {
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

// lineDiff is the hunks of a unified diff of two entrypoints, without file
// headers: the job name is printed above it.
func lineDiff(a, b string) string {
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b), Context: EntrypointContext,
	})
	if err != nil {
		// Writing to a bytes.Buffer does not fail.
		return "(diff failed: " + err.Error() + ")\n"
	}
	return s
}

// wordDiff lists the words removed and added between a and b, as
// difflib's matcher aligns the two word sequences.
func wordDiff(a, b string) []string {
	aw, bw := strings.Fields(a), strings.Fields(b)
	var out []string
	for _, op := range difflib.NewMatcher(aw, bw).GetOpCodes() {
		if op.Tag == 'd' || op.Tag == 'r' {
			for _, w := range aw[op.I1:op.I2] {
				out = append(out, "- "+w)
			}
		}
		if op.Tag == 'i' || op.Tag == 'r' {
			for _, w := range bw[op.J1:op.J2] {
				out = append(out, "+ "+w)
			}
		}
	}
	return out
}

// lines splits s keeping "\n" on every line, the last one included, so a
// changed last line diffs as a change and not as a missing newline.
func lines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:]+"\n")
	}
	return out
}

// byKind counts refs per kind: "Deployment ×2".
func byKind(refs []string) []string {
	n := map[string]int{}
	for _, r := range refs {
		kind, _, _ := strings.Cut(r, "/")
		n[kind]++
	}
	var out []string
	for _, k := range tree.SortedKeys(n) {
		out = append(out, fmt.Sprintf("%s ×%d", k, n[k]))
	}
	return out
}

// LevelRose reports whether the run now needs a more privileged Pod
// Security level; NamespaceChanged whether its objects moved namespace.
func (d RunDiff) LevelRose() bool {
	return d.Status == Changed && LevelRises(d.PodSecurityBefore, d.PodSecurityAfter)
}

// NamespaceChanged: the run's namespaces differ (a run that is new or
// removed has no "before" to move from).
func (d RunDiff) NamespaceChanged() bool {
	return d.Status == Changed && !equalStrings(d.NamespacesBefore, d.NamespacesAfter)
}
