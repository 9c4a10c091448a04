package kueue

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// Kueue's preemption, as v0.17.0's classical preemptor does it, for one
// flavor per resource and a flat cohort (ClusterQueues directly under one
// cohort, no lending limits). Followed in Kueue's source:
// pkg/scheduler/preemption/preemption.go (classicalPreemptions,
// fillBackWorkloads, workloadFits, findCandidates),
// pkg/scheduler/preemption/classical/hierarchical_preemption.go
// (classifyPreemptionVariant, isAboveBorrowingThreshold),
// classical/candidate_generator.go (candidate order and validity),
// common/preemption_policy.go (SatisfiesPreemptionPolicy) and
// common/ordering.go (CandidatesOrdering).

// The policy values of a ClusterQueue's spec.preemption.
const (
	PolicyNever                     = "Never"
	PolicyLowerPriority             = "LowerPriority"
	PolicyLowerOrNewerEqualPriority = "LowerOrNewerEqualPriority"
	PolicyAny                       = "Any"
)

// Preemption is a ClusterQueue's spec.preemption; "" is Kueue's default,
// Never.
type Preemption struct {
	WithinClusterQueue  string
	ReclaimWithinCohort string
	// BorrowWithinCohort is borrowWithinCohort.policy (Never or
	// LowerPriority), MaxPriorityThreshold its maxPriorityThreshold.
	BorrowWithinCohort   string
	MaxPriorityThreshold *int32
}

// ClusterQueue is a ClusterQueue's quota per resource (milli-units, summed
// over flavors), its borrowing limits (absent: unlimited) and policy.
type ClusterQueue struct {
	Name           string
	Nominal        map[corev1.ResourceName]int64
	BorrowingLimit map[corev1.ResourceName]int64
	Preemption     Preemption
	// Reserved is what Workloads reserve of it as the server counts
	// (status.flavorsReservation); nil: the sum of the Cohort's Admitted.
	Reserved map[corev1.ResourceName]int64
}

// QueuedWorkload is a Workload as the preemptor weighs it.
type QueuedWorkload struct {
	// Name is how a report names it (its run).
	Name         string
	ClusterQueue string
	// Priority is its spec.priority (the WorkloadPriorityClass's value).
	Priority int32
	// Created orders equal priorities (Kueue's queue-order timestamp);
	// Reserved is when its quota was reserved (newer is preempted first).
	Created, Reserved time.Time
	Evicted           bool
	Usage             map[corev1.ResourceName]int64
	// UID orders candidates whose quota was reserved in the same second
	// (the API's times have seconds only), as Kueue does.
	UID string
}

// Cohort is the ClusterQueues sharing quota (one, when the queue is in no
// cohort) and the Workloads holding quota in them.
type Cohort struct {
	Queues   []ClusterQueue
	Admitted []QueuedWorkload
}

// Prediction is what Kueue does with an incoming Workload: admit it now
// (Borrowing: only by borrowing from the cohort), admit it by preempting
// Preempt, or leave it queued.
type Prediction struct {
	Admitted  bool
	Borrowing bool
	Preempt   []QueuedWorkload
}

// variant is how a candidate may be preempted (classical's
// preemptionVariant): reclaimWithoutBorrowing only if the incoming
// Workload then fits without borrowing.
type variant int

const (
	withinCQ variant = iota
	hierarchicalReclaim
	reclaimWithoutBorrowing
	reclaimWhileBorrowing
)

type candidate struct {
	wl      QueuedWorkload
	variant variant
}

// sim is the cohort's usage as the preemptor simulates removals.
type sim struct {
	c     Cohort
	usage map[string]map[corev1.ResourceName]int64
}

func newSim(c Cohort) *sim {
	s := &sim{c: c, usage: map[string]map[corev1.ResourceName]int64{}}
	counted := map[string]bool{}
	for _, q := range c.Queues {
		s.usage[q.Name] = map[corev1.ResourceName]int64{}
		for r, v := range q.Reserved {
			s.usage[q.Name][r] = v
		}
		counted[q.Name] = q.Reserved != nil
	}
	for _, w := range c.Admitted {
		if !counted[w.ClusterQueue] {
			s.add(w, 1)
		}
	}
	return s
}

func (s *sim) add(w QueuedWorkload, sign int64) {
	u := s.usage[w.ClusterQueue]
	if u == nil {
		return
	}
	for r, v := range w.Usage {
		u[r] += sign * v
	}
}

func (s *sim) queue(name string) *ClusterQueue {
	for i := range s.c.Queues {
		if s.c.Queues[i].Name == name {
			return &s.c.Queues[i]
		}
	}
	return nil
}

// available is what cq can still take of r: its own nominal quota left
// when alone; in a cohort, what the cohort's quota has left, capped by
// cq's borrowing limit.
func (s *sim) available(cq *ClusterQueue, r corev1.ResourceName) int64 {
	own := cq.Nominal[r] - s.usage[cq.Name][r]
	if len(s.c.Queues) < 2 {
		return own
	}
	var left int64
	for _, q := range s.c.Queues {
		left += q.Nominal[r] - s.usage[q.Name][r]
	}
	if lim, ok := cq.BorrowingLimit[r]; ok {
		left = min(left, own+lim)
	}
	return left
}

// fits is Kueue's workloadFits: every request within what is available,
// and, when borrowing is not allowed, within cq's nominal quota.
func (s *sim) fits(cq *ClusterQueue, needs map[corev1.ResourceName]int64, borrow bool) bool {
	for r, v := range needs {
		if !borrow && s.usage[cq.Name][r]+v > cq.Nominal[r] {
			return false
		}
		if v > s.available(cq, r) {
			return false
		}
	}
	return true
}

// withinNominal: q uses no more than its nominal quota of any of rs.
func (s *sim) withinNominal(q *ClusterQueue, rs []corev1.ResourceName) bool {
	for _, r := range rs {
		if s.usage[q.Name][r] > q.Nominal[r] {
			return false
		}
	}
	return true
}

// Predict is what Kueue does with a Workload of priority prio asking needs
// of ClusterQueue cq, created after every Workload in c.
func Predict(c Cohort, cq string, prio int32, needs map[corev1.ResourceName]int64) Prediction {
	s := newSim(c)
	q := s.queue(cq)
	if q == nil {
		return Prediction{}
	}
	if s.fits(q, needs, true) {
		return Prediction{Admitted: true, Borrowing: !s.fits(q, needs, false)}
	}
	var short []corev1.ResourceName
	for _, r := range sortedKeys(needs) {
		if needs[r] > s.available(q, r) {
			short = append(short, r)
		}
	}
	cands := candidates(s, q, prio, needs, short)
	for _, borrow := range attempts(s, q, cands, short) {
		if got := tryPreempt(s, q, needs, short, cands, borrow); got != nil {
			return Prediction{Admitted: true, Preempt: got}
		}
	}
	return Prediction{}
}

// attempts is classicalPreemptions' choice of trying with borrowing, without,
// or both, and in which order.
func attempts(s *sim, q *ClusterQueue, cands []candidate, short []corev1.ResourceName) []bool {
	forbidden := borrowForbidden(q.Preemption)
	fromOthers, hierarchical := false, false
	for _, c := range cands {
		if c.wl.ClusterQueue != q.Name {
			fromOthers = true
			hierarchical = hierarchical || c.variant == hierarchicalReclaim
		}
	}
	under := true
	for _, r := range short {
		under = under && s.usage[q.Name][r] < q.Nominal[r]
	}
	switch {
	case !fromOthers || forbidden && !under:
		return []bool{true}
	case forbidden && !hierarchical:
		return []bool{false, true}
	}
	return []bool{true, false}
}

// tryPreempt removes candidates in order until the Workload fits, then
// adds back, newest removal first, every one it still fits without
// (fillBackWorkloads). The simulation is restored before returning.
func tryPreempt(s *sim, q *ClusterQueue, needs map[corev1.ResourceName]int64, short []corev1.ResourceName, cands []candidate, borrow bool) []QueuedWorkload {
	var targets []QueuedWorkload
	defer func() {
		for _, t := range targets {
			s.add(t, 1)
		}
	}()
	for _, c := range cands {
		if c.wl.ClusterQueue != q.Name {
			if borrow && c.variant == reclaimWithoutBorrowing {
				continue
			}
			if s.withinNominal(s.queue(c.wl.ClusterQueue), short) {
				continue // no longer borrowing: nothing to reclaim
			}
		}
		s.add(c.wl, -1)
		targets = append(targets, c.wl)
		if !s.fits(q, needs, borrow) {
			continue
		}
		for i := len(targets) - 2; i >= 0; i-- {
			s.add(targets[i], 1)
			if s.fits(q, needs, borrow) {
				targets = slices.Delete(targets, i, i+1)
			} else {
				s.add(targets[i], -1)
			}
		}
		return slices.Clone(targets)
	}
	return nil
}

// candidates are the Workloads the policy lets the incoming one preempt,
// in Kueue's order: evicted ones first, other ClusterQueues' before its
// own, lower priority first, most recently admitted first.
func candidates(s *sim, q *ClusterQueue, prio int32, needs map[corev1.ResourceName]int64, short []corev1.ResourceName) []candidate {
	p := q.Preemption
	advantage := fitsNominal(s, q, needs)
	var out []candidate
	for _, w := range s.c.Admitted {
		if !usesAny(w, short) {
			continue
		}
		if w.ClusterQueue == q.Name {
			if satisfies(p.WithinClusterQueue, prio, w) {
				out = append(out, candidate{w, withinCQ})
			}
			continue
		}
		other := s.queue(w.ClusterQueue)
		if other == nil || len(s.c.Queues) < 2 || !satisfies(p.ReclaimWithinCohort, prio, w) || s.withinNominal(other, short) {
			continue
		}
		v := reclaimWhileBorrowing
		switch {
		case advantage:
			v = hierarchicalReclaim
		case borrowForbidden(p) || aboveThreshold(w.Priority, prio, p.MaxPriorityThreshold):
			v = reclaimWithoutBorrowing
		}
		out = append(out, candidate{w, v})
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		return cmp.Or(
			scheduler.CompareBool(b.wl.Evicted, a.wl.Evicted),
			scheduler.CompareBool(a.wl.ClusterQueue == q.Name, b.wl.ClusterQueue == q.Name),
			cmp.Compare(a.wl.Priority, b.wl.Priority),
			b.wl.Reserved.Compare(a.wl.Reserved),
			cmp.Compare(a.wl.UID, b.wl.UID),
			cmp.Compare(a.wl.Name, b.wl.Name),
		)
	})
	return out
}

// fitsNominal: the Workload fits in what q's nominal quota has left (Kueue's
// QuantitiesFitInQuota on the ClusterQueue: its hierarchical advantage
// over the Workloads borrowing that quota).
func fitsNominal(s *sim, q *ClusterQueue, needs map[corev1.ResourceName]int64) bool {
	for r, v := range needs {
		if s.usage[q.Name][r]+v > q.Nominal[r] {
			return false
		}
	}
	return true
}

// satisfies is SatisfiesPreemptionPolicy, for an incoming Workload newer
// than every candidate: an equal priority never qualifies under
// LowerOrNewerEqualPriority, since the candidate is the older one.
func satisfies(policy string, prio int32, w QueuedWorkload) bool {
	switch policy {
	case PolicyLowerPriority, PolicyLowerOrNewerEqualPriority:
		return w.Priority < prio
	case PolicyAny:
		return true
	}
	return false
}

func borrowForbidden(p Preemption) bool {
	return p.BorrowWithinCohort == "" || p.BorrowWithinCohort == PolicyNever
}

// aboveThreshold is isAboveBorrowingThreshold: a candidate of the incoming
// priority or more, or over maxPriorityThreshold, is preempted only if the
// incoming Workload then fits without borrowing.
func aboveThreshold(cand, incoming int32, threshold *int32) bool {
	if cand >= incoming {
		return true
	}
	return threshold != nil && cand > *threshold
}

func usesAny(w QueuedWorkload, rs []corev1.ResourceName) bool {
	for _, r := range rs {
		if w.Usage[r] > 0 {
			return true
		}
	}
	return false
}

func sortedKeys(m map[corev1.ResourceName]int64) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
