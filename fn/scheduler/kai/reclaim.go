package kai

import (
	"cmp"
	"slices"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// reclaim is KAI's reclaim action for run (reclaim/reclaim.go): allowed
// when its queue stays within its fair share (CanReclaimResources), it
// takes running, preemptible gangs of other queues, whatever their
// priority, that the proportion plugin lets it (FilterVictim), in victim
// order, until the run fits; each victim's queue must still be over its
// share when it is taken (FitsReclaimStrategy), and the run's queue must
// stay less saturated than the queues it took from
// (reclaimingQueuesRemainWithinBoundaries). nil: no reclaim admits it.
func (m *model) reclaim(c Cluster, run Job) []Job {
	leaf := m.share[run.Queue]
	for r := range 3 {
		if !le(leaf.alloc[r]+run.Requested.get(r), leaf.fair[r]) {
			return nil
		}
	}
	if !run.Preemptible && !withinDeserved(leaf, leaf.allocNP, run.Requested) {
		return nil
	}
	var cands []Job
	for _, j := range c.Jobs {
		if j.Queue == run.Queue || !j.Preemptible || j.Allocated.zero() || m.share[j.Queue] == nil {
			continue
		}
		mine, theirs := m.leveled(run.Queue, j.Queue)
		if m.filterVictim(run, m.share[mine], m.share[theirs]) {
			cands = append(cands, j)
		}
	}
	m.victimOrder(run.Queue, cands)
	remaining := map[string][3]float64{}
	rem := func(q string) [3]float64 {
		if v, ok := remaining[q]; ok {
			return v
		}
		return m.share[q].alloc
	}
	involved := map[string][3]bool{}
	freed := Resources{}
	var victims []Job
	for _, j := range cands {
		mine, theirs := m.leveled(run.Queue, j.Queue)
		if !m.fitsStrategy(run, m.share[mine], m.share[theirs], rem(theirs)) {
			continue
		}
		m.up(j.Queue, func(s *share) {
			v := rem(s.name)
			in := involved[s.name]
			for r := range 3 {
				v[r] -= j.Allocated.get(r)
				in[r] = in[r] || j.Allocated.get(r) > 0
			}
			remaining[s.name], involved[s.name] = v, in
		})
		victims = append(victims, j)
		freed = freed.add(j.Allocated, 1)
		if fits(run.Requested, c.Free.add(freed, 1)) {
			if m.withinBoundaries(run, rem, remaining, involved) {
				return victims
			}
			return nil
		}
	}
	return nil
}

// filterVictim: a run that would take its queue over its deserved quota
// reclaims only from a queue over its fair share; one within it, from a
// queue over its deserved quota in a resource the run asks for.
func (m *model) filterVictim(run Job, mine, theirs *share) bool {
	if !withinDeserved(mine, mine.alloc, run.Requested) {
		return overAllocatable(theirs, theirs.alloc)
	}
	under := false
	for r := range 3 {
		if run.Requested.get(r) <= 0 || theirs.deserved[r] == Unlimited {
			continue
		}
		if theirs.alloc[r] > theirs.deserved[r] {
			return true
		}
		under = under || theirs.alloc[r] < theirs.deserved[r]
	}
	return !under
}

// fitsStrategy is FitsReclaimStrategy on what the victim's queue has left:
// still over its allocatable share (MaintainFairShare), or the run's
// queue within deserved quota and the victim's over it
// (GuaranteeDeservedQuota).
func (m *model) fitsStrategy(run Job, mine, theirs *share, left [3]float64) bool {
	if overAllocatable(theirs, left) {
		return true
	}
	if !withinDeserved(mine, mine.alloc, run.Requested) {
		return false
	}
	for r := range 3 {
		if !le(left[r], theirs.deserved[r]) {
			return true
		}
	}
	return false
}

func overAllocatable(s *share, alloc [3]float64) bool {
	for r := range 3 {
		if !le(alloc[r], allocatable(s, r)) {
			return true
		}
	}
	return false
}

// withinBoundaries: at every level of the run's queue, once it holds the
// run, its saturation (allocated over fair share) above 1 stays below
// that of every sibling it took from, in the resources involved; a
// non-preemptible run keeps each level within deserved quota.
func (m *model) withinBoundaries(run Job, rem func(string) [3]float64, remaining map[string][3]float64, involved map[string][3]bool) bool {
	ok := true
	m.up(run.Queue, func(s *share) {
		mine := rem(s.name)
		for r := range 3 {
			mine[r] += run.Requested.get(r)
		}
		for sib := range remaining {
			other := m.share[sib]
			if sib == s.name || m.queues[sib].Parent != m.queues[s.name].Parent {
				continue
			}
			theirs := rem(sib)
			for r := range 3 {
				if !involved[sib][r] && run.Requested.get(r) <= 0 {
					continue
				}
				if s.fair[r] == Unlimited && other.fair[r] == Unlimited {
					continue
				}
				ours, their := saturation(mine[r], s.fair[r]), saturation(theirs[r], other.fair[r])
				if ours > 1 && other.fair[r] > 0 && ours >= their {
					ok = false
				}
			}
		}
		if !run.Preemptible && !withinDeserved(s, s.allocNP, run.Requested) {
			ok = false
		}
	})
	return ok
}

func saturation(alloc, fair float64) float64 {
	switch {
	case fair == 0 && alloc > 0:
		return 1e300
	case fair == 0, fair == Unlimited:
		return 0
	}
	return alloc / fair
}

// victimOrder is KAI's victim queue, simplified: queues over their fair
// share first, then the lower queue priority, then the queue furthest
// over its share; within a queue the lowest priority first, then the
// newest.
func (m *model) victimOrder(runQueue string, jobs []Job) {
	key := func(j Job) (*share, int) {
		_, theirs := m.leveled(runQueue, j.Queue)
		return m.share[theirs], m.queues[theirs].Priority
	}
	slices.SortStableFunc(jobs, func(a, b Job) int {
		sa, pa := key(a)
		sb, pb := key(b)
		return cmp.Or(
			scheduler.CompareBool(overAllocatable(sb, sb.alloc), overAllocatable(sa, sa.alloc)),
			cmp.Compare(pa, pb),
			cmp.Compare(dominant(sb), dominant(sa)),
			cmp.Compare(a.Priority, b.Priority),
			b.Created.Compare(a.Created),
			cmp.Compare(a.Name, b.Name),
		)
	})
}

// dominant is the queue's largest allocated-to-fair-share ratio.
func dominant(s *share) float64 {
	d := 0.0
	for r := range 3 {
		d = max(d, saturation(s.alloc[r], s.fair[r]))
	}
	return d
}

// preempt is KAI's preempt action (preempt/preempt.go): running,
// preemptible gangs of the run's own queue of lower priority, the lowest
// first, then the newest, until the run fits.
func preempt(c Cluster, run Job) []Job {
	var cands []Job
	for _, j := range c.Jobs {
		if j.Queue == run.Queue && j.Preemptible && j.Priority < run.Priority && !j.Allocated.zero() {
			cands = append(cands, j)
		}
	}
	slices.SortStableFunc(cands, func(a, b Job) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), b.Created.Compare(a.Created), cmp.Compare(a.Name, b.Name))
	})
	freed := Resources{}
	for i, j := range cands {
		freed = freed.add(j.Allocated, 1)
		if fits(run.Requested, c.Free.add(freed, 1)) {
			return cands[:i+1]
		}
	}
	return nil
}
