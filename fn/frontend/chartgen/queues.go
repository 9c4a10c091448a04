package chartgen

import (
	"sort"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// QueueRef is a queue a rendered run is labelled with, for the README:
// which scheduler reads it (KAI or Kueue), its name, the chart value that
// stands for it (Value: queue, or kueueQueue for Kueue's beside KAI's),
// and whether that value sets it (the render carries its sentinel there).
type QueueRef struct {
	Scheduler string `json:"scheduler"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Settable  bool   `json:"settable,omitempty"`
}

// queuesOf reads the queue labels of the rendered objects (not the
// profile's keys: a KAI queue may be written in the specs' labels), each
// scheduler's queue once, sorted. A sentinel is the profile's own value
// (def), set by its knob.
func queuesOf(docs []rendered.Doc, def KnobDefaults, kueueBesideKAI bool) []QueueRef {
	kueueValue := KnobQueue
	if kueueBesideKAI {
		kueueValue = KnobKueueQueue
	}
	seen := map[QueueRef]bool{}
	var out []QueueRef
	for _, d := range docs {
		md, _ := d.Data["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		for sched, key := range map[string]string{"KAI": vocab.KAIQueueLabel, "Kueue": vocab.KueueQueueLabel} {
			v, ok := labels[key].(string)
			if !ok {
				continue
			}
			q := QueueRef{Scheduler: sched, Name: v, Value: KnobQueue}
			if sched == "Kueue" {
				q.Value = kueueValue
			}
			switch v {
			case SentinelQueue:
				q.Name, q.Settable = def.Queue, true
			case SentinelKueueQueue:
				q.Name, q.Settable = def.KueueQueue, true
			}
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scheduler != out[j].Scheduler {
			return out[i].Scheduler < out[j].Scheduler
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// queueCell is the README's queue column for one profile.
func queueCell(pm *ProfileMeta) string {
	if len(pm.Queues) == 0 {
		return "— (no queue)"
	}
	refused := func(knob string) bool {
		r := pm.Renders[string(runparams.RayJob)]
		if r == nil {
			return true
		}
		_, no := r.Unavailable[knob]
		return no
	}
	cell := ""
	for i, q := range pm.Queues {
		if i > 0 {
			cell += "; "
		}
		what := "KAI queue"
		if q.Scheduler == "Kueue" {
			what = "Kueue LocalQueue"
		}
		name := "`" + q.Name + "`"
		if q.Name == "" {
			name = "(none)"
		}
		value := q.Value
		if value == "" {
			value = KnobQueue
		}
		switch {
		case q.Settable:
			cell += what + " " + name + " (`" + value + "` sets it)"
		case refused(value):
			cell += what + " " + name + ", the profile's (`" + value + "` is refused)"
		default:
			cell += what + " " + name + ", the profile's"
		}
	}
	return cell
}
