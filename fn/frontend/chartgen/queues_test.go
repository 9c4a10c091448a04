package chartgen

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// labelled is a rendered object with the labels key=value pairs.
func labelled(kv ...string) rendered.Doc {
	labels := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	return rendered.Doc{Data: map[string]any{"metadata": map[string]any{"labels": labels}}}
}

// The README's queues are the rendered objects' queue labels, each once,
// sorted by scheduler then name; a sentinel stands for the profile's own
// queue and is settable, by queue, or kueueQueue when Kueue admits beside
// KAI.
func TestQueuesOf(t *testing.T) {
	const kai, kueue = "kai.scheduler/queue", "kueue.x-k8s.io/queue-name"
	def := KnobDefaults{Queue: "research", KueueQueue: "team-a"}
	cases := []struct {
		name   string
		docs   []rendered.Doc
		beside bool
		want   []QueueRef
	}{
		{"no queue", []rendered.Doc{labelled("app", "x"), {Data: map[string]any{}}}, false, nil},
		{"written in the specs, once", []rendered.Doc{labelled(kai, "rl"), labelled(kai, "rl")}, false,
			[]QueueRef{{Scheduler: "KAI", Name: "rl", Value: "queue"}}},
		{"sorted by scheduler, then name", []rendered.Doc{labelled(kueue, "b"), labelled(kai, "z"), labelled(kueue, "a")}, false,
			[]QueueRef{{Scheduler: "KAI", Name: "z", Value: "queue"}, {Scheduler: "Kueue", Name: "a", Value: "queue"}, {Scheduler: "Kueue", Name: "b", Value: "queue"}}},
		{"KAI's sentinel", []rendered.Doc{labelled(kai, SentinelQueue)}, false,
			[]QueueRef{{Scheduler: "KAI", Name: "research", Value: "queue", Settable: true}}},
		{"Kueue alone: its sentinel is queue's", []rendered.Doc{labelled(kueue, SentinelQueue)}, false,
			[]QueueRef{{Scheduler: "Kueue", Name: "research", Value: "queue", Settable: true}}},
		{"Kueue beside KAI", []rendered.Doc{labelled(kai, SentinelQueue, kueue, SentinelKueueQueue)}, true,
			[]QueueRef{{Scheduler: "KAI", Name: "research", Value: "queue", Settable: true}, {Scheduler: "Kueue", Name: "team-a", Value: "kueueQueue", Settable: true}}},
		{"a label not a string", []rendered.Doc{{Data: map[string]any{"metadata": map[string]any{"labels": map[string]any{kai: 3}}}}}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, queuesOf(c.docs, def, c.beside))
		})
	}
}

// A queue cell names each queue, and whether its value sets it, is
// refused, or leaves the profile's.
func TestQueueCell(t *testing.T) {
	refusing := map[string]*RenderMeta{string(runparams.RayJob): {Unavailable: map[string]string{"queue": "the profile's clusters name it"}}}
	taking := map[string]*RenderMeta{string(runparams.RayJob): {}}
	cases := []struct {
		name string
		pm   ProfileMeta
		want string
	}{
		{"no queue", ProfileMeta{}, "— (no queue)"},
		{"settable", ProfileMeta{Queues: []QueueRef{{Scheduler: "KAI", Name: "research", Value: "queue", Settable: true}}, Renders: taking},
			"KAI queue `research` (`queue` sets it)"},
		{"refused", ProfileMeta{Queues: []QueueRef{{Scheduler: "KAI", Name: "rl", Value: "queue"}, {Scheduler: "Kueue", Name: "team-a", Value: "kueueQueue", Settable: true}}, Renders: refusing},
			"KAI queue `rl`, the profile's (`queue` is refused); Kueue LocalQueue `team-a` (`kueueQueue` sets it)"},
		{"no rayjob render: refused", ProfileMeta{Queues: []QueueRef{{Scheduler: "Kueue", Name: "lq", Value: "queue"}}},
			"Kueue LocalQueue `lq`, the profile's (`queue` is refused)"},
		{"the profile's, not refused", ProfileMeta{Queues: []QueueRef{{Scheduler: "KAI", Name: "rl"}}, Renders: taking},
			"KAI queue `rl`, the profile's"},
		{"no name", ProfileMeta{Queues: []QueueRef{{Scheduler: "KAI", Value: "queue", Settable: true}}, Renders: taking},
			"KAI queue (none) (`queue` sets it)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, queueCell(&c.pm))
		})
	}
}
