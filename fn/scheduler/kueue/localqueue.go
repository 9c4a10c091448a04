package kueue

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// What a LocalQueue line checks, read as Kueue v0.17.0 defines the objects
// (apis/kueue/v1beta2 localqueue_types.go and clusterqueue_types.go; the
// module is not linked here, so the fields are read by name): the
// LocalQueue's spec.clusterQueue exists; every resource the run's pods
// request is covered by one of its spec.resourceGroups (Kueue never admits
// a Workload asking for an uncovered resource); the run fits the nominal
// quota of the flavors covering it (a run larger than the whole quota is
// never admitted, unless it can borrow from a cohort); and how much of the
// quota is free now (status.flavorsReservation); a run the free quota does
// not hold says what Kueue does then: borrow, preempt, or queue (admission).

// PreflightObject judges a found LocalQueue against the pods of the
// objects that name it; any other prerequisite is not Kueue's to judge.
func (Integration) PreflightObject(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun, l scheduler.Line, u *unstructured.Unstructured) (scheduler.Line, bool, error) {
	if l.Kind != "LocalQueue" {
		return l, false, nil
	}
	l, err := localQueueLine(ctx, r, run, l, u)
	return l, true, err
}

// localQueueLine judges a found LocalQueue against the pods of the objects
// that name it.
func localQueueLine(ctx context.Context, c scheduler.Reader, in scheduler.PreflightRun, l scheduler.Line, lq *unstructured.Unstructured) (scheduler.Line, error) {
	cqName, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
	if cqName == "" {
		l.State, l.Detail = scheduler.Missing, "has no spec.clusterQueue: Kueue admits nothing from it"
		return l, nil
	}
	cq, out, err := c.Get(ctx, ClusterQueues, "", cqName)
	if c.Stops(err) {
		return l, err
	}
	if out != scheduler.Found {
		st, d := scheduler.Verdict(out, err)
		l.State, l.Detail = st, fmt.Sprintf("points at ClusterQueue %s: %s; its Workloads stay pending", cqName, d)
		if st == scheduler.Missing {
			l.Detail = fmt.Sprintf("points at ClusterQueue %s, which does not exist: its Workloads stay pending", cqName)
		}
		return l, passStops(c, err)
	}
	need := scheduler.Demand(in.Pods, l.ReferencedBy)
	quota := readQuota(cq)
	cohort := cohortOf(cq)
	l.State = scheduler.OK
	var notes []string
	short := false
	for _, name := range placement.SortedNames(need) {
		state, note, waits := quotaNote(cqName, cohort, name, need[name], quota)
		if scheduler.Worse(state, l.State) {
			l.State = state
		}
		short = short || waits
		notes = append(notes, note)
	}
	l.Detail = fmt.Sprintf("ClusterQueue %s: %s", cqName, strings.Join(notes, "; "))
	// In a cohort, quota free in the ClusterQueue may be lent to a peer:
	// only the cohort's count says whether the run fits.
	if (short || cohort != "") && l.State == scheduler.OK {
		v, waits, err := admission(ctx, c, in, l, cq, cohort, need)
		if err != nil {
			return l, err
		}
		l.Detail += ": " + v
		l.Waits = waits
	}
	return l, nil
}

// quotaNote judges one resource the run asks for against the
// ClusterQueue's quota of it, in one wording: what the run needs, then what
// is free of the nominal quota. waits is true when the free quota does not
// hold it (admission then says what Kueue does).
func quotaNote(cqName, cohort string, name corev1.ResourceName, want resource.Quantity, quota map[corev1.ResourceName]flavorQuota) (scheduler.State, string, bool) {
	needs := fmt.Sprintf("needs %s %s", scheduler.Amount(want), name)
	q, covered := quota[name]
	switch {
	case !covered:
		return scheduler.Missing, fmt.Sprintf("%s; none covered: Kueue never admits it; expected %s among a resource group's coveredResources", needs, name), false
	case q.invalid != "":
		return scheduler.CannotTell, fmt.Sprintf("%s; cannot tell what is free: %s", needs, q.invalid), false
	}
	free := q.nominal.DeepCopy()
	free.Sub(q.reserved)
	left := fmt.Sprintf("%s; %s of %s free", needs, scheduler.Amount(nonNegative(free)), scheduler.Amount(q.nominal))
	if want.Cmp(q.nominal) > 0 && cohort == "" {
		return scheduler.Missing, fmt.Sprintf("%s: more than the whole nominal quota, and ClusterQueue %s is in no cohort to borrow from: Kueue never admits it", left, cqName), false
	}
	return scheduler.OK, left, want.Cmp(free) > 0
}

// flavorQuota is a resource's nominal quota summed over flavors and what
// Workloads reserved of it; invalid names a value of the server's that is
// no quantity of a cluster (negative, absurd, not a number), which makes
// both sums meaningless.
type flavorQuota struct {
	nominal, reserved resource.Quantity
	invalid           string
	// borrowing sums the flavors' borrowingLimit when every flavor has one
	// (limited); one flavor without a limit lets the queue borrow freely.
	borrowing        resource.Quantity
	limited, unbound bool
}

// add adds one value of the ClusterQueue's (field names it) to sum, or
// records why it is not a quantity a cluster can have.
func (q *flavorQuota) add(sum *resource.Quantity, field string, v any) {
	n, err := quantityOf(v)
	if err != nil {
		if q.invalid == "" {
			q.invalid = field + " " + err.Error()
		}
		return
	}
	sum.Add(n)
}

// readQuota sums, per resource, the nominal quota of every flavor of every
// resource group, and what Workloads have reserved of it.
func readQuota(cq *unstructured.Unstructured) map[corev1.ResourceName]flavorQuota {
	out := map[corev1.ResourceName]flavorQuota{}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		covered, _, _ := unstructured.NestedStringSlice(gm, "coveredResources")
		for _, r := range covered {
			if _, ok := out[corev1.ResourceName(r)]; !ok {
				out[corev1.ResourceName(r)] = flavorQuota{}
			}
		}
		flavors, _, _ := unstructured.NestedSlice(gm, "flavors")
		for _, f := range flavors {
			fm, _ := f.(map[string]any)
			resources, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range resources {
				rm, _ := r.(map[string]any)
				name, _ := rm["name"].(string)
				q := out[corev1.ResourceName(name)]
				q.add(&q.nominal, "spec nominalQuota of "+name, rm["nominalQuota"])
				if lim, ok := rm["borrowingLimit"]; ok && !q.unbound {
					q.limited = true
					q.add(&q.borrowing, "spec borrowingLimit of "+name, lim)
				} else {
					q.limited, q.unbound = false, true
				}
				out[corev1.ResourceName(name)] = q
			}
		}
	}
	usage, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
	for _, f := range usage {
		fm, _ := f.(map[string]any)
		resources, _, _ := unstructured.NestedSlice(fm, "resources")
		for _, r := range resources {
			rm, _ := r.(map[string]any)
			name, _ := rm["name"].(string)
			if q, ok := out[corev1.ResourceName(name)]; ok {
				q.add(&q.reserved, "status.flavorsReservation total of "+name, rm["total"])
				out[corev1.ResourceName(name)] = q
			}
		}
	}
	return out
}

// quantityOf reads a quantity written as a string or a number. Anything
// else, a negative value or one over maxQuantity (a hostile or broken
// answer) is an error naming the value: counted, it would make "80 free
// of 16".
func quantityOf(v any) (resource.Quantity, error) {
	var q resource.Quantity
	switch t := v.(type) {
	case string:
		parsed, err := resource.ParseQuantity(t)
		if err != nil {
			return q, fmt.Errorf("is %q: expected a quantity", truncate(t))
		}
		q = parsed
	case int64:
		q = *resource.NewQuantity(t, resource.DecimalSI)
	case float64:
		parsed, err := resource.ParseQuantity(strconv.FormatFloat(t, 'g', -1, 64))
		if err != nil {
			return q, fmt.Errorf("is %v: expected a quantity", t)
		}
		q = parsed
	default:
		return q, fmt.Errorf("is %s: expected a quantity", kindOf(v))
	}
	return q, placement.InRange(q, show(v))
}

// show is a value of the answer as it was written: a string as is, a
// number as Go prints it.
func show(v any) string {
	if s, ok := v.(string); ok {
		return truncate(s)
	}
	return fmt.Sprint(v)
}

func kindOf(v any) string {
	if v == nil {
		return "missing"
	}
	return fmt.Sprintf("a %T", v)
}

// truncate keeps a value of the server's short enough for one line.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func nonNegative(q resource.Quantity) resource.Quantity {
	if q.Sign() < 0 {
		return resource.Quantity{}
	}
	return q
}

// passStops is err when it ends the preflight, else nil (the line says
// what the read found).
func passStops(c scheduler.Reader, err error) error {
	if c.Stops(err) {
		return err
	}
	return nil
}
