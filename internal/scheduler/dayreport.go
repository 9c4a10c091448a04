package scheduler

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// DayRun is one run of a cluster day (or week) as it happened: its team
// and priority, when Kueue first admitted it and the scheduler bound all
// its Pods (after apply), the GPUs its bound Pods held while some of its
// Pods waited, the NVLink racks its Pods span, how often Kueue preempted
// it and whether Git stopped it.
type DayRun struct {
	Run        string        `json:"run"`
	Team       string        `json:"team"`
	Priority   int32         `json:"priority,omitempty"`
	Queued     bool          `json:"queued"`
	Admission  time.Duration `json:"admissionNs"`
	AllBound   time.Duration `json:"allBoundNs"`
	PartlyHeld int64         `json:"gpusHeldWhilePartlyPlaced"`
	Racks      int           `json:"racks"`
	Preempted  int           `json:"preempted,omitempty"`
	Stopped    bool          `json:"stoppedInGit,omitempty"`
}

// Prediction is one thing preflight said of a run before it was applied
// (Kind: "admission", "placement"), and what happened.
type Prediction struct {
	Run       string `json:"run"`
	Kind      string `json:"kind"`
	Preflight string `json:"preflight"`
	Happened  string `json:"happened"`
	Agree     bool   `json:"agree"`
}

// DayReport is a cluster day's report: every run, every prediction.
type DayReport struct {
	Nodes       int           `json:"nodes"`
	Wall        time.Duration `json:"wallNs"`
	Runs        []DayRun      `json:"runs"`
	Predictions []Prediction  `json:"predictions"`
	// Spent is the harness's wall time per step of a run (render,
	// preflight, apply, waiting for Kueue or the scheduler...): where a
	// day's minutes go, so that a slower day says which step grew.
	Spent map[string]time.Duration `json:"spentNs,omitempty"`
}

// Time adds the wall time since begin to step's total; use as
// defer r.Time("step", time.Now()).
func (r *DayReport) Time(step string, begin time.Time) {
	if r.Spent == nil {
		r.Spent = map[string]time.Duration{}
	}
	r.Spent[step] += time.Since(begin)
}

// Agreement is how many predictions matched what happened, of how many.
func (r *DayReport) Agreement() (agree, total int) {
	for _, p := range r.Predictions {
		if p.Agree {
			agree++
		}
	}
	return agree, len(r.Predictions)
}

// Percent is Agreement as a percentage (100 with no predictions).
func (r *DayReport) Percent() float64 {
	a, n := r.Agreement()
	if n == 0 {
		return 100
	}
	return 100 * float64(a) / float64(n)
}

// Table is the report as text: one line a run, the disagreements, totals.
func (r *DayReport) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tTEAM\tPRIORITY\tQUEUED\tADMITTED\tALL BOUND\tGPUS HELD PARTLY\tRACKS\tPREEMPTED\tSTOPPED")
	for _, x := range r.Runs {
		fmt.Fprintf(w, "%s\t%s\t%d\t%t\t%s\t%s\t%d\t%d\t%d\t%t\n", x.Run, x.Team, x.Priority, x.Queued,
			x.Admission.Round(time.Millisecond), x.AllBound.Round(time.Millisecond), x.PartlyHeld, x.Racks, x.Preempted, x.Stopped)
	}
	_ = w.Flush()
	for _, p := range r.Predictions {
		if !p.Agree {
			fmt.Fprintf(&b, "DISAGREE %s %s: preflight %q, happened %q\n", p.Run, p.Kind, p.Preflight, p.Happened)
		}
	}
	steps := make([]string, 0, len(r.Spent))
	for k := range r.Spent {
		steps = append(steps, k)
	}
	slices.SortFunc(steps, func(a, b string) int { return cmp.Compare(r.Spent[b], r.Spent[a]) })
	for _, k := range steps {
		fmt.Fprintf(&b, "spent %s in %s\n", r.Spent[k].Round(time.Millisecond), k)
	}
	a, n := r.Agreement()
	fmt.Fprintf(&b, "%d runs on %d nodes in %s; %d of %d predictions as preflight said (%.1f%%)\n",
		len(r.Runs), r.Nodes, r.Wall.Round(time.Second), a, n, r.Percent())
	return b.String()
}

// Write writes the report as indented JSON to path.
func (r *DayReport) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
