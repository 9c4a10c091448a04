package chartgen

import (
	"sort"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
)

// QueueRef is a queue a rendered run is labelled with, for the README:
// which scheduler reads it (KAI or Kueue), its name, and whether the
// chart's `queue` value sets it (the render carries the queue sentinel
// there).
type QueueRef struct {
	Scheduler string `json:"scheduler"`
	Name      string `json:"name"`
	Settable  bool   `json:"settable,omitempty"`
}

// queuesOf reads the queue labels of the rendered objects (not the
// profile's keys: a KAI queue may be written in the specs' labels), each
// scheduler's queue once, sorted. A sentinel is the profile's own value
// (def), set by `queue`.
func queuesOf(docs []rendered.Doc, def string) []QueueRef {
	seen := map[QueueRef]bool{}
	var out []QueueRef
	for _, d := range docs {
		md, _ := d.Data["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		for sched, key := range map[string]string{"KAI": kai.QueueLabel, "Kueue": kueue.QueueLabel} {
			v, ok := labels[key].(string)
			if !ok {
				continue
			}
			q := QueueRef{Scheduler: sched, Name: v}
			if v == SentinelQueue {
				q = QueueRef{Scheduler: sched, Name: def, Settable: true}
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
	refused := true
	if r := pm.Renders[string(runparams.RayJob)]; r != nil {
		_, refused = r.Unavailable[KnobQueue]
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
		switch {
		case q.Settable:
			cell += what + " " + name + " (`queue` sets it)"
		case refused:
			cell += what + " " + name + ", the profile's (`queue` is refused)"
		default:
			cell += what + " " + name + ", the profile's"
		}
	}
	return cell
}
