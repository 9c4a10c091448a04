package kai

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// What KAI Scheduler does with a pending gang its queue's free room does
// not hold, as KAI-Scheduler d5bc503a does it, counted in the three
// resources its proportion plugin divides (GPU, CPU, memory), cluster-wide
// (which node a pod lands on is fn/analyse/placement's question).
// Followed in KAI's source:
//   - the session's actions in order (pkg/apis/kai/v1/schedulingshard_types.go
//     defaultActionPriorities): allocate, consolidation (moves pods, frees
//     nothing cluster-wide: not modelled), reclaim, preempt;
//   - pkg/scheduler/plugins/proportion: proportion.go (queue usage,
//     fair shares), resource_division/resource_division.go (deserved quota
//     first, the rest by queue priority then overQuotaWeight, kValue 1 and
//     no usage history), capacity_policy (a queue's limit, a non-preemptible
//     gang within deserved quota), reclaimable/reclaimable.go,
//     filter_victims.go and strategies/strategies.go (who may be reclaimed
//     from, and the fair-share saturation check);
//   - pkg/scheduler/actions/reclaim/reclaim.go (victims in other queues,
//     whatever their priority) and actions/preempt/preempt.go (victims in
//     the same queue, of lower priority), victims preemptible and running;
//   - pkg/common/podgroup/preemptible.go (below priority 100 a PodGroup is
//     preemptible unless spec.preemptibility says otherwise).
// Simplified: whole gangs are victims (a run's gang has no elastic pods),
// taken in KAI's victim order until the run fits; queues' historical usage
// is taken as none.

// Unlimited is KAI's -1: no limit, or a deserved quota of everything.
const Unlimited = -1.0

// Resources are GPUs, CPU millicores and memory bytes.
type Resources struct{ GPU, CPU, Memory float64 }

func (r Resources) get(i int) float64 { return [3]float64{r.GPU, r.CPU, r.Memory}[i] }

func (r Resources) zero() bool { return r.GPU <= 0 && r.CPU <= 0 && r.Memory <= 0 }

func (r Resources) add(o Resources, sign float64) Resources {
	return Resources{r.GPU + sign*o.GPU, r.CPU + sign*o.CPU, r.Memory + sign*o.Memory}
}

// Add is r plus o.
func (r Resources) Add(o Resources) Resources { return r.add(o, 1) }

// Sub is r less o.
func (r Resources) Sub(o Resources) Resources { return r.add(o, -1) }

// Queue is a KAI Queue's spec: its parent, priority (KAI's default 100)
// and per resource its quota (deserved), limit and overQuotaWeight.
type Queue struct {
	Name, Parent               string
	Priority                   int
	Deserved, Limit, OverQuota Resources
}

// Job is a PodGroup as KAI weighs it.
type Job struct {
	// Name is how a report names it (its run).
	Name, Queue string
	Priority    int32
	Preemptible bool
	// Allocated is what its running pods hold; Requested what its active
	// pods ask, running or pending (status.resourcesStatus).
	Allocated, Requested Resources
	Created              time.Time
}

// Cluster is what KAI divides (the ready nodes' allocatable less other
// schedulers' pods), what of it is free, its queues and PodGroups.
type Cluster struct {
	Total, Free Resources
	Queues      []Queue
	Jobs        []Job
}

// Prediction is what KAI does with the run: admit it now, by reclaiming
// from other queues (Reclaim) or preempting in its own (Preempt); or leave
// it pending, behind Ahead, or for Why (its queue's limit, its deserved
// quota).
type Prediction struct {
	Admitted         bool
	Reclaim, Preempt []Job
	Ahead            []Job
	Why              string
}

type share struct {
	name                                                   string
	deserved, limit, weight, fair, alloc, allocNP, request [3]float64
}

type model struct {
	queues map[string]*Queue
	share  map[string]*share
}

// Predict is what KAI does with run (pending, its Requested what it asks)
// on c, run being newer than every job of c.
func Predict(c Cluster, run Job) Prediction {
	m := build(c, run)
	leaf := m.share[run.Queue]
	if leaf == nil {
		return Prediction{Why: "its queue is not among the cluster's"}
	}
	if why := m.overCapacity(run); why != "" {
		return Prediction{Why: why}
	}
	if fits(run.Requested, c.Free) {
		return Prediction{Admitted: true}
	}
	if v := m.reclaim(c, run); v != nil {
		return Prediction{Admitted: true, Reclaim: v}
	}
	if v := preempt(c, run); v != nil {
		return Prediction{Admitted: true, Preempt: v}
	}
	var ahead []Job
	for _, j := range c.Jobs {
		if j.Queue == run.Queue && j.Allocated.zero() && !j.Requested.zero() && j.Priority >= run.Priority {
			ahead = append(ahead, j)
		}
	}
	slices.SortStableFunc(ahead, func(a, b Job) int { return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.Created.Compare(b.Created)) })
	return Prediction{Ahead: ahead}
}

func fits(need, free Resources) bool {
	for i := range 3 {
		if need.get(i) > free.get(i)+1e-9 {
			return false
		}
	}
	return true
}

func build(c Cluster, run Job) *model {
	m := &model{queues: map[string]*Queue{}, share: map[string]*share{}}
	for i := range c.Queues {
		q := &c.Queues[i]
		m.queues[q.Name] = q
		s := &share{name: q.Name}
		for r := range 3 {
			s.deserved[r], s.limit[r], s.weight[r] = q.Deserved.get(r), q.Limit.get(r), q.OverQuota.get(r)
		}
		m.share[q.Name] = s
	}
	for _, j := range append(slices.Clone(c.Jobs), run) {
		m.up(j.Queue, func(s *share) {
			for r := range 3 {
				s.alloc[r] += j.Allocated.get(r)
				s.request[r] += j.Requested.get(r)
				if !j.Preemptible {
					s.allocNP[r] += j.Allocated.get(r)
				}
			}
		})
	}
	m.divide(c.Total, "", 0)
	return m
}

// up calls f on q and every ancestor.
func (m *model) up(q string, f func(*share)) {
	for seen := 0; q != "" && seen < 64; seen++ {
		s := m.share[q]
		if s == nil {
			return
		}
		f(s)
		q = m.queues[q].Parent
	}
}

// children are the queues under parent ("": the top ones, and those
// whose parent is not among the queues), by name.
func (m *model) children(parent string) []string {
	var out []string
	for n, q := range m.queues {
		top := q.Parent == "" || m.queues[q.Parent] == nil
		if parent == "" && top || parent != "" && q.Parent == parent {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// divide sets the fair shares of parent's children from total, then
// theirs from each one's (setFairShareForQueues).
func (m *model) divide(total Resources, parent string, depth int) {
	if depth > 16 {
		return // a parent cycle, which KAI's queue controller refuses
	}
	kids := m.children(parent)
	for r := range 3 {
		m.divideOne(total.get(r), r, kids)
	}
	for _, k := range kids {
		f := m.share[k].fair
		m.divide(Resources{f[0], f[1], f[2]}, k, depth+1)
	}
}

func requestable(s *share, r int) float64 {
	if s.limit[r] == Unlimited {
		return s.request[r]
	}
	return math.Min(s.limit[r], s.request[r])
}

// divideOne is setResourceShare: deserved quota first (up to what is
// asked), then the rest by queue priority, each priority's queues by
// overQuotaWeight in whole units, the fractions left to the largest.
func (m *model) divideOne(total float64, r int, kids []string) {
	left := total
	for _, k := range kids {
		s := m.share[k]
		d := s.deserved[r]
		if d == Unlimited {
			d = total
		}
		give := math.Min(d, requestable(s, r))
		s.fair[r] += give
		left -= give
	}
	if left <= 0 {
		return
	}
	byPrio := map[int][]string{}
	var prios []int
	for _, k := range kids {
		p := m.queues[k].Priority
		if _, ok := byPrio[p]; !ok {
			prios = append(prios, p)
		}
		byPrio[p] = append(byPrio[p], k)
	}
	slices.Sort(prios)
	slices.Reverse(prios)
	rest := map[int]map[string]float64{}
	for _, p := range prios {
		left, rest[p] = m.upToFair(left, r, byPrio[p])
	}
	for _, p := range prios {
		names := make([]string, 0, len(rest[p]))
		for n := range rest[p] {
			names = append(names, n)
		}
		slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(rest[p][b], rest[p][a]) })
		for _, n := range names {
			if left <= 0 {
				return
			}
			give := math.Min(1, left)
			m.share[n].fair[r] += give
			left -= give
		}
	}
}

func unsatisfied(s *share, r int) bool {
	return s.request[r] > s.fair[r] && (s.limit[r] == Unlimited || s.limit[r] > s.fair[r])
}

// upToFair is divideUpToFairShare (kValue 1, no usage: a queue's weight is
// its overQuotaWeight among the queues still asking).
func (m *model) upToFair(total float64, r int, kids []string) (float64, map[string]float64) {
	rest := map[string]float64{}
	for round := 0; round < 1000 && total > 0; round++ {
		sum := 0.0
		for _, k := range kids {
			if s := m.share[k]; unsatisfied(s, r) && requestable(s, r) > s.fair[r] {
				sum += s.weight[r]
			}
		}
		if sum == 0 {
			break
		}
		again, amount := false, total
		for _, k := range kids {
			s := m.share[k]
			if total <= 0 || !unsatisfied(s, r) || s.weight[r] == 0 {
				continue
			}
			asked := math.Max(0, requestable(s, r)-s.fair[r])
			fair := amount * s.weight[r] / sum
			give := asked
			if asked > fair {
				give = math.Floor(fair)
				if fair-give > 0 {
					rest[k] = fair - give
				}
			} else {
				delete(rest, k)
			}
			if give == 0 {
				continue
			}
			s.fair[r] += give
			total -= give
			again = again || asked < fair
		}
		if !again {
			break
		}
	}
	return total, rest
}

// overCapacity is the capacity policy: the run over a queue's limit, or a
// non-preemptible run over a queue's deserved quota, waits whatever is
// freed.
func (m *model) overCapacity(run Job) string {
	why := ""
	m.up(run.Queue, func(s *share) {
		for r := range 3 {
			need := run.Requested.get(r)
			if why == "" && need > 0 && s.limit[r] != Unlimited && s.alloc[r]+need > s.limit[r] {
				why = "over the limit of queue " + s.name
			}
			if why == "" && need > 0 && !run.Preemptible && s.deserved[r] != Unlimited && s.allocNP[r]+need > s.deserved[r] {
				why = "non-preemptible (priority 100 or more) and over the deserved quota of queue " + s.name
			}
		}
	})
	return why
}

// allocatable is GetAllocatableShare: the larger of deserved and fair
// share, within the limit.
func allocatable(s *share, r int) float64 {
	if s.deserved[r] == Unlimited {
		return s.limit[r]
	}
	a := math.Max(s.deserved[r], s.fair[r])
	if s.limit[r] != Unlimited {
		a = math.Min(a, s.limit[r])
	}
	return a
}

// le is compareQuantities(a, b) <= 0, Unlimited the largest.
func le(a, b float64) bool {
	switch {
	case b == Unlimited:
		return true
	case a == Unlimited:
		return false
	}
	return a <= b+1e-9
}

// withinDeserved: alloc plus need within the deserved quota of s.
func withinDeserved(s *share, alloc [3]float64, need Resources) bool {
	for r := range 3 {
		if !le(alloc[r]+need.get(r), s.deserved[r]) {
			return false
		}
	}
	return true
}

// path is q and its ancestors, the top one first.
func (m *model) path(q string) []string {
	var out []string
	m.up(q, func(s *share) { out = append([]string{s.name}, out...) })
	return out
}

// leveled is getLeveledQueues: the first queues of the two paths that
// differ (two top queues, or two siblings).
func (m *model) leveled(a, b string) (string, string) {
	pa, pb := m.path(a), m.path(b)
	var x, y string
	for i := 0; i < min(len(pa), len(pb)); i++ {
		x, y = pa[i], pb[i]
		if x != y {
			break
		}
	}
	return x, y
}
