package kai

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func gpus(n float64) Resources { return Resources{GPU: n} }

// q is a queue deserving d GPUs with over-quota weight w, no limit.
func q(name string, d, w float64) Queue {
	return Queue{Name: name, Priority: 100, Deserved: gpus(d), Limit: gpus(Unlimited), OverQuota: gpus(w)}
}

// running is a running gang of n GPUs, preemptible below priority 100 as
// KAI defaults it, created at minute at.
func running(name, queue string, prio int32, n float64, at int) Job {
	return Job{Name: name, Queue: queue, Priority: prio, Preemptible: prio < 100, Allocated: gpus(n), Requested: gpus(n),
		Created: time.Date(2026, 1, 1, 0, at, 0, 0, time.UTC)}
}

func pending(name, queue string, prio int32, n float64, at int) Job {
	j := running(name, queue, prio, n, at)
	j.Allocated = Resources{}
	return j
}

// KAI's preempt and reclaim actions and its proportion plugin, rule by
// rule: preemption within a queue by priority, reclaim between queues by
// deserved quota and fair share whatever the priority, the capacity
// policy, and what leaves the run pending.
func TestPredict(t *testing.T) {
	pinned := running("pinned", "a", 10, 16, 0)
	pinned.Preemptible = false
	limited := q("a", 8, 1)
	limited.Limit = gpus(8)
	parent := func(name, p string, d float64) Queue { x := q(name, d, 1); x.Parent = p; return x }
	cases := []struct {
		name           string
		total          float64
		queues         []Queue
		jobs           []Job
		run            Job
		admitted       bool
		reclaim, evict []string
		ahead          []string
		why            string
	}{
		{name: "fits the free GPUs", total: 16, queues: []Queue{q("a", 16, 1)},
			run: pending("new", "a", 50, 8, 9), admitted: true},
		{name: "preempts a lower priority gang of its queue", total: 16, queues: []Queue{q("a", 16, 1)},
			jobs: []Job{running("low", "a", 10, 16, 0)}, run: pending("new", "a", 50, 16, 9), admitted: true, evict: []string{"low"}},
		{name: "spares an equal priority: queued", total: 16, queues: []Queue{q("a", 16, 1)},
			jobs: []Job{running("same", "a", 50, 16, 0)}, run: pending("new", "a", 50, 16, 9)},
		{name: "spares a gang whose spec.preemptibility says non-preemptible", total: 16, queues: []Queue{q("a", 16, 1)},
			jobs: []Job{pinned}, run: pending("new", "a", 50, 16, 9)},
		{name: "the lowest priority first, then the newest", total: 24, queues: []Queue{q("a", 24, 1)},
			jobs: []Job{running("old-low", "a", 10, 8, 0), running("new-low", "a", 10, 8, 5), running("mid", "a", 40, 8, 1)},
			run:  pending("new", "a", 50, 8, 9), admitted: true, evict: []string{"new-low"}},
		{name: "queued behind a pending gang it does not outrank", total: 16, queues: []Queue{q("a", 16, 1)},
			jobs: []Job{running("same", "a", 50, 16, 0), pending("waiting", "a", 60, 8, 1)}, run: pending("new", "a", 50, 16, 9), ahead: []string{"waiting"}},
		{name: "reclaims what another queue holds over its deserved quota", total: 16, queues: []Queue{q("a", 8, 1), q("b", 8, 1)},
			jobs: []Job{running("borrower", "b", 10, 16, 0)}, run: pending("new", "a", 10, 8, 9), admitted: true, reclaim: []string{"borrower"}},
		{name: "reclaim is by quota, not priority", total: 16, queues: []Queue{q("a", 8, 1), q("b", 8, 1)},
			jobs: []Job{running("borrower", "b", 90, 16, 0)}, run: pending("new", "a", 1, 8, 9), admitted: true, reclaim: []string{"borrower"}},
		{name: "reclaim spares a non-preemptible gang", total: 16, queues: []Queue{q("a", 8, 1), q("b", 8, 1)},
			jobs: []Job{running("borrower", "b", 100, 16, 0)}, run: pending("new", "a", 10, 8, 9)},
		{name: "no reclaim from a queue within its deserved quota", total: 16, queues: []Queue{q("a", 0, 1), q("b", 16, 1)},
			jobs: []Job{running("owner", "b", 10, 16, 0)}, run: pending("new", "a", 50, 8, 9)},
		{name: "over-quota weights share the rest: within its share it reclaims", total: 16, queues: []Queue{q("a", 0, 1), q("b", 0, 3)},
			jobs: []Job{running("big", "b", 10, 16, 0)}, run: pending("new", "a", 10, 4, 9), admitted: true, reclaim: []string{"big"}},
		{name: "over-quota weights share the rest: beyond its share it waits", total: 16, queues: []Queue{q("a", 0, 1), q("b", 0, 3)},
			jobs: []Job{running("big", "b", 10, 16, 0)}, run: pending("new", "a", 10, 8, 9)},
		{name: "a queue's limit", total: 32, queues: []Queue{limited},
			run: pending("new", "a", 10, 16, 9), why: "over the limit of queue a"},
		{name: "a non-preemptible run within deserved quota only", total: 32, queues: []Queue{q("a", 8, 1)},
			run: pending("new", "a", 100, 16, 9), why: "non-preemptible (priority 100 or more) and over the deserved quota of queue a"},
		{name: "reclaims between departments, from the one over its share", total: 16,
			queues: []Queue{q("d1", 8, 1), q("d2", 8, 1), parent("a", "d1", 8), parent("b", "d2", 8)},
			jobs:   []Job{running("borrower", "b", 10, 16, 0)}, run: pending("new", "a", 10, 8, 9), admitted: true, reclaim: []string{"borrower"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Predict(Cluster{Total: gpus(c.total), Free: gpus(c.total - used(c.jobs)), Queues: c.queues, Jobs: c.jobs}, c.run)
			assert.Equal(t, c.admitted, got.Admitted, "admitted")
			assert.Equal(t, c.reclaim, names(got.Reclaim), "reclaim")
			assert.Equal(t, c.evict, names(got.Preempt), "preempt")
			assert.Equal(t, c.ahead, names(got.Ahead), "ahead")
			assert.Equal(t, c.why, got.Why)
		})
	}
}

func used(jobs []Job) float64 {
	n := 0.0
	for _, j := range jobs {
		n += j.Allocated.GPU
	}
	return n
}

func names(js []Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.Name)
	}
	return out
}
