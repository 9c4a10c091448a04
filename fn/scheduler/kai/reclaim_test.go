package kai

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Reclaim's victim order and filters: among queues over their fair share
// the lower queue priority is reclaimed from first; a victim's queue must
// still be over its share when the victim is taken; a non-preemptible
// gang is never a victim.
func TestReclaimVictims(t *testing.T) {
	prio := func(q Queue, p int) Queue { q.Priority = p; return q }
	cases := []struct {
		name   string
		queues []Queue
		jobs   []Job
		want   []string
	}{
		{name: "the lower queue priority first",
			queues: []Queue{q("a", 8, 1), prio(q("b", 0, 1), 50), prio(q("c", 0, 1), 100)},
			jobs:   []Job{running("in-b", "b", 10, 8, 0), running("in-c", "c", 10, 8, 0)}, want: []string{"in-b"}},
		{name: "the other way round",
			queues: []Queue{q("a", 8, 1), prio(q("b", 0, 1), 200), prio(q("c", 0, 1), 100)},
			jobs:   []Job{running("in-b", "b", 10, 8, 0), running("in-c", "c", 10, 8, 0)}, want: []string{"in-c"}},
		{name: "a non-preemptible gang is passed over",
			queues: []Queue{q("a", 8, 1), prio(q("b", 0, 1), 50), prio(q("c", 0, 1), 100)},
			jobs:   []Job{running("in-b", "b", 100, 8, 0), running("in-c", "c", 10, 8, 0)}, want: []string{"in-c"}},
		{name: "only what takes the queue back to its share",
			queues: []Queue{q("a", 8, 1), q("b", 8, 1)},
			jobs:   []Job{running("b-1", "b", 10, 4, 0), running("b-2", "b", 10, 4, 1), running("b-3", "b", 10, 8, 2)}, want: []string{"b-3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Predict(Cluster{Total: gpus(16), Free: gpus(16 - used(c.jobs)), Queues: c.queues, Jobs: c.jobs}, pending("new", "a", 10, 8, 9))
			assert.True(t, got.Admitted)
			assert.Equal(t, c.want, names(got.Reclaim))
		})
	}
}
