package kueue_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// The week's teams: each a namespace with the LocalQueue lab-queue on a
// ClusterQueue of its own, all in cohort kweek, with nominal quota for this
// many runs (16 GPUs each). They add up to the H100 pool (dayH100 nodes of
// 8 GPUs): whatever Kueue admits, the scheduler can place.
var weekQuota = map[string]int{"a": 2, "b": 2, "c": 1}

// A run's team is weekTeams[i%7] and its WorkloadPriorityClass
// weekPriority[weekLevels[i%5]]: most runs low, a fifth mid, a fifth high.
const (
	weekTeams  = "abcabac"
	weekLevels = "lmllh"
	weekCohort = "kweek"
)

var weekPriority = map[byte]struct {
	class string
	value int32
}{'l': {"kweek-low", 10}, 'm': {"kweek-mid", 100}, 'h': {"kweek-high", 1000}}

// weekPreemption is every ClusterQueue's spec.preemption: a team preempts
// its own lower-priority runs, takes back its nominal quota from any
// borrower, and while borrowing preempts other teams' runs of priority
// 100 or less that are lower than its own.
var weekPreemption = map[string]any{
	"withinClusterQueue":  "LowerPriority",
	"reclaimWithinCohort": "Any",
	"borrowWithinCohort":  map[string]any{"policy": "LowerPriority", "maxPriorityThreshold": int64(100)},
}

// weekRun is a run of the week: a run of the day with a priority, a tick
// at which Git stops it (-1: never), and whether Kueue holds quota for it.
type weekRun struct {
	*dayRun
	class     string
	priority  int32
	stop      int
	running   bool
	preempted int // evictions by preemption seen (its Workload's status.schedulingStats)
	uid       string
}

// kueueState is what Kueue decided for the week's runs: which hold quota,
// and how often each was preempted.
type kueueState struct {
	held      map[string]bool
	preempted map[string]int
	preemptor map[string]string // the last preemptor's RayJob UID
}

// week is the week's stream: the day's, its runs with priorities.
type week struct {
	*day
	runs      []*weekRun
	byJob     map[string]*weekRun
	byUID     map[string]*weekRun
	refreshed time.Time // when counted last refreshed a ClusterQueue's status
}

// TestClusterWeekQueued is a week on the shared 1,000-node cluster of
// TestClusterDayQueued, opt-in as the day is: a stream of
// NRL_CLUSTER_WEEK_RUNS runs (120 unless set) of the H100 Kueue profile
// from three teams whose ClusterQueues share a cohort (borrowing, and
// preemption within a queue, to reclaim and while borrowing), at three
// WorkloadPriorityClasses. A run lasts a few ticks once Kueue admits it;
// every ninth is stopped in Git two ticks after it is submitted, whatever
// its state. Before each submission preflight says what Kueue does with
// it: admits it now, by borrowing, by preempting named runs, or queues it;
// the test then waits for Kueue to settle and compares, preemptions by
// name. A preempted run goes back to its queue (its Pods deleted as the
// garbage collector would) and runs again when Kueue readmits it; every
// admitted run's Pods must all bind. Reported as the day is (a line per
// run, a prediction per submission; NRL_CLUSTER_WEEK_REPORT); at least
// 99% of the predictions must hold.
func TestClusterWeekQueued(t *testing.T) {
	n := streamRuns(t, "NRL_CLUSTER_WEEK_RUNS", 120)
	t.Cleanup(operator.PollEvery(streamPoll))
	begin := time.Now()
	w := &week{day: &day{t: t, env: startWeek(t)}, byJob: map[string]*weekRun{}, byUID: map[string]*weekRun{}}
	w.report.Nodes = 250*4 + 40 + dayH100
	t.Cleanup(func() { w.write(begin, "NRL_CLUSTER_WEEK_REPORT", "clusterweek.json") })
	for i := range n {
		w.events(i)
		w.submit(i)
	}
	for w.events(-1) {
	}
	require.GreaterOrEqual(t, w.report.Percent(), 99.0, "preflight's agreement with what Kueue did")
}

// startWeek starts the cluster, the priority classes and the teams'
// queues in the cohort.
func startWeek(t *testing.T) *operator.Env {
	env := startCluster(t)
	ctx := context.Background()
	for _, p := range weekPriority {
		require.NoError(t, kueue.PriorityClass(ctx, env, p.class, int64(p.value)))
	}
	for team, runs := range weekQuota {
		ns := "kweek-" + team
		_, objs, _ := renderFor(t, ns, ns, "setup")
		require.NoError(t, scheduler.SetUp(ctx, env, ns, objs))
		spec := map[string]any{"cohortName": weekCohort, "preemption": weekPreemption}
		require.NoError(t, kueue.PreemptingQueue(ctx, env, ns, "lab-queue", ns, strconv.Itoa(16*runs), spec, waitFor))
		t.Cleanup(func() { scheduler.Teardown(env, ns) })
	}
	return env
}

// submit renders run i with its team and priority, waits for Kueue to
// settle, asks preflight, applies the run and compares what Kueue did.
func (w *week) submit(i int) {
	t := w.t
	team := string(weekTeams[i%len(weekTeams)])
	p := weekPriority[weekLevels[i%len(weekLevels)]]
	r := &weekRun{dayRun: &dayRun{name: fmt.Sprintf("kweek-%03d", i), team: team, ns: "kweek-" + team, lasts: 3 + (i*7)%8, due: -1},
		class: p.class, priority: p.value, stop: -1}
	if i%9 == 4 {
		r.stop = i + 2
	}
	r.docs, r.objs, r.job = renderFor(t, r.name, r.ns, fmt.Sprintf("user-%s%d", team, i%3))
	withPriority(r.docs, r.objs, r.class)
	w.settle()
	in, err := preflight.InputOf(r.docs, "", r.ns)
	require.NoError(t, err)
	rep, err := preflight.Run(context.Background(), conn(t, w.env, r.ns), in)
	require.NoError(t, err)
	detail := lineOf(t, rep, "LocalQueue").Detail
	said := w.said(detail)
	before := w.holding()
	require.NoError(t, w.env.Apply(context.Background(), r.ns, r.objs))
	r.applied = time.Now()
	r.uid = string(rayJob(t, w.env, r.ns, r.job).UID)
	w.byUID[r.uid] = r
	r.rep = len(w.report.Runs)
	w.report.Runs = append(w.report.Runs, scheduler.DayRun{Run: r.name, Team: team, Priority: r.priority, Queued: strings.HasPrefix(said, "queued")})
	w.runs = append(w.runs, r)
	w.byJob[r.job] = r
	st := w.settle()
	by := w.preemptors(st)
	happened := "queued"
	if st.held[r.name] {
		happened = w.admittedHow(r, by)
	}
	for victim, ps := range by {
		if others := slices.DeleteFunc(slices.Clone(ps), func(p string) bool { return p == r.name }); len(others) > 0 {
			t.Logf("run %s preempted by %s, which Kueue admitted after %s", victim, strings.Join(others, ", "), r.name)
		}
	}
	w.predict(r.dayRun, "admission", said, happened)
	if said != happened {
		t.Logf("run %s (team %s, priority %d): preflight's line %q; held before it: %s", r.name, team, r.priority, detail, w.describe(before))
	}
	w.refresh(i, st)
}

// preemptedRE is one Workload preflight names: "RayJob kweek-b/kweek-003
// (priority 10)".
var preemptedRE = regexp.MustCompile(`(\w+) (?:[\w.-]+/)?([\w.-]+) \(priority (-?\d+)\)`)

// said is preflight's LocalQueue verdict as the week compares it: admitted
// now (by borrowing; by preempting runs, named and sorted) or queued.
func (w *week) said(detail string) string {
	if _, list, ok := strings.Cut(detail, "admitted now by preempting "); ok {
		var names []string
		for _, m := range preemptedRE.FindAllStringSubmatch(list, -1) {
			name := m[2]
			if r := w.byJob[name]; r != nil {
				name = r.name
			}
			names = append(names, name+" (priority "+m[3]+")")
		}
		slices.Sort(names)
		return "admitted now by preempting " + strings.Join(names, ", ")
	}
	switch {
	case strings.Contains(detail, "admitted now by borrowing from cohort "):
		return "admitted now by borrowing from cohort " + weekCohort
	case strings.Contains(detail, ": queued "):
		return "queued"
	}
	return "admitted now"
}

// admittedHow is how Kueue admitted r: by preempting the runs Kueue's
// Events say r preempted (by: victim → its preemptors since the harness
// last looked; a victim may hold quota again already, or have preempted
// another run in turn), by borrowing when its team holds more than its
// nominal quota, or within it.
func (w *week) admittedHow(r *weekRun, by map[string][]string) string {
	var victims []string
	held := w.holding()
	held[r.name] = true
	for _, q := range w.runs {
		if slices.Contains(by[q.name], r.name) {
			victims = append(victims, fmt.Sprintf("%s (priority %d)", q.name, q.priority))
		}
	}
	if len(victims) > 0 {
		slices.Sort(victims)
		return "admitted now by preempting " + strings.Join(victims, ", ")
	}
	team := 0
	for _, q := range w.runs {
		if q.team == r.team && held[q.name] {
			team++
		}
	}
	if team > weekQuota[r.team] {
		return "admitted now by borrowing from cohort " + weekCohort
	}
	return "admitted now"
}

// describe names runs with their team and priority.
func (w *week) describe(runs map[string]bool) string {
	var out []string
	for _, r := range w.runs {
		if runs[r.name] {
			out = append(out, fmt.Sprintf("%s (team %s, priority %d)", r.name, r.team, r.priority))
		}
	}
	return strings.Join(out, ", ")
}

// holding is the runs Kueue holds quota for, as the harness last saw.
func (w *week) holding() map[string]bool {
	out := map[string]bool{}
	for _, r := range w.runs {
		if r.running {
			out[r.name] = true
		}
	}
	return out
}

// events finishes the runs due at tick and stops those Git stops at tick
// (tick < 0: stops, else the run due first, to drain the week), each
// followed by what Kueue does in their place; false when nothing was due.
func (w *week) events(tick int) bool {
	var due []*weekRun
	for _, r := range w.runs {
		switch {
		case r.finished:
		case r.stop >= 0 && (tick < 0 || r.stop <= tick), r.running && (tick < 0 || r.due <= tick):
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b *weekRun) int { return w.order(a) - w.order(b) })
	if tick < 0 && len(due) > 1 {
		due = due[:1]
	}
	for _, r := range due {
		if r.stop >= 0 {
			w.remove(r.dayRun)
			w.report.Runs[r.rep].Stopped = true
		} else {
			w.finish(r.dayRun)
		}
		r.running = false
		st := w.settle()
		for victim, by := range w.preemptors(st) {
			w.t.Logf("run %s preempted by %s, which Kueue admitted as %s's quota freed", victim, strings.Join(by, ", "), r.name)
		}
		w.refresh(max(tick, 0), st)
	}
	if tick < 0 && len(due) == 0 {
		for _, r := range w.runs {
			require.True(w.t, r.finished, "run %s never ran: the week cannot drain", r.name)
		}
	}
	return len(due) > 0
}

// order puts stops first, then runs by when they are due.
func (w *week) order(r *weekRun) int {
	if r.stop >= 0 {
		return -1
	}
	return r.due
}

// refresh brings the harness up to what Kueue did: a run preempted since
// the harness last looked loses its cluster (its Pods go, as the garbage
// collector would take them once KubeRay deletes it), a run holding quota
// that is not running runs from tick once its Pods are bound.
func (w *week) refresh(tick int, st kueueState) {
	for _, r := range w.runs {
		if !r.finished && st.preempted[r.name] > r.preempted {
			w.podsGone(r.dayRun)
			r.running, r.due, r.cluster = false, -1, ""
			r.preempted = st.preempted[r.name]
			w.report.Runs[r.rep].Preempted = r.preempted
		}
	}
	for _, r := range w.runs {
		if !r.finished && !r.running && st.held[r.name] {
			w.start(r, tick)
		}
	}
}

// start waits for KubeRay to create r's cluster and the scheduler to bind
// all its Pods (the cohort's quota is the pool: all must), and records it.
func (w *week) start(r *weekRun, tick int) {
	cluster, err := w.env.RayClusterOf(context.Background(), r.ns, r.job, waitFor)
	if err != nil {
		job := rayJob(w.t, w.env, r.ns, r.job)
		var conds []any
		if wl, err := kueue.Workload(context.Background(), w.env, job, time.Second); err == nil {
			conds, _, _ = unstructured.NestedSlice(wl.Object, "status", "conditions")
		}
		w.t.Fatalf("%v; RayJob %s suspend %v, deployment %q; its Workload's conditions %v", err, r.job, job.Spec.Suspend, job.Status.JobDeploymentStatus, conds)
	}
	r.cluster = cluster
	run := &w.report.Runs[r.rep]
	if run.Admission == 0 {
		run.Admission = time.Since(r.applied)
	}
	pods := w.waitBound(r.dayRun, 0)
	if len(bound(r.job, pods)) != 2 || len(pods) != podsPerRun || slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Spec.NodeName == "" }) {
		var all corev1.PodList
		require.NoError(w.t, w.env.Client.List(context.Background(), &all, client.HasLabels{"ray.io/cluster"}))
		var on []string
		for _, p := range all.Items {
			on = append(on, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
		}
		w.t.Fatalf("%s: %d of %d Pods, not all bound (%v); the Pods of Ray clusters: %v; held: %s", r.name, len(pods), podsPerRun, bound(r.job, pods), on, w.describe(w.holding()))
	}
	if run.AllBound == 0 {
		run.AllBound = time.Since(r.applied)
	}
	_, run.Racks = w.spread(pods)
	r.running, r.due = true, tick+r.lasts
}

// settle waits until Kueue has decided on every Workload of the week's
// runs and nothing it decided is still under way (an eviction, a
// preemption pending), and no pending run fits the cohort's free quota
// (Kueue would admit it); it returns what Kueue decided.
func (w *week) settle() kueueState {
	held, preempted, preemptor := map[string]bool{}, map[string]int{}, map[string]string{}
	cohort := 0
	for _, n := range weekQuota {
		cohort += n
	}
	require.NoError(w.t, operator.Wait(context.Background(), waitFor, "Kueue to settle the cohort", func(ctx context.Context) (bool, string, error) {
		clear(held)
		clear(preempted)
		clear(preemptor)
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(vocab.KueueAPIVersion)
		l.SetKind("WorkloadList")
		if err := w.env.Server.Client.List(ctx, l); err != nil {
			return false, "", err
		}
		seen, pending := 0, map[string]int64{}
		for i := range l.Items {
			wl := &l.Items[i]
			refs := wl.GetOwnerReferences()
			if !strings.HasPrefix(wl.GetNamespace(), "kweek-") || len(refs) == 0 || w.byJob[refs[0].Name] == nil || w.byJob[refs[0].Name].finished {
				continue
			}
			r := w.byJob[refs[0].Name]
			seen++
			preempted[r.name] = preemptions(wl)
			if _, msg := conditionOf(wl, "Preempted"); jobUIDRE.MatchString(msg) {
				preemptor[r.name] = jobUIDRE.FindStringSubmatch(msg)[1]
			}
			reserved, msg := conditionOf(wl, "QuotaReserved")
			evicted, _ := conditionOf(wl, "Evicted")
			switch {
			case reserved == "True" && evicted == "True":
				return false, r.name + " being evicted", nil
			case reserved == "True":
				held[r.name] = true
			case msg == "" || strings.Contains(msg, "Pending the preemption"):
				return false, r.name + ": " + msg, nil
			default:
				pending[r.team]++
			}
		}
		if active := w.active(); seen != active {
			return false, fmt.Sprintf("%d Workloads of %d runs", seen, active), nil
		}
		waiting := int64(0)
		for _, n := range pending {
			waiting += n
		}
		if waiting > 0 && len(held) < cohort {
			return false, fmt.Sprintf("%d pending, %d of %d runs' quota held", waiting, len(held), cohort), nil
		}
		return w.counted(ctx, held, pending)
	}))
	return kueueState{held: held, preempted: preempted, preemptor: preemptor}
}

// jobUIDRE is the preemptor's RayJob UID in the message of a Workload's
// Preempted condition (Kueue v0.17.0 pkg/scheduler/preemption/
// preemption.go, preemptionMessage), which readmission keeps after
// "Previously: " (pkg/workload/workload.go, resetActiveCondition).
var jobUIDRE = regexp.MustCompile(`Preempted to accommodate a workload \(UID: [^,]*, JobUID: ([^)]*)\)`)

// preemptors is, for each run Kueue preempted since the harness last
// looked, the runs that preempted it: the last one, named by its Preempted
// condition, and one unnamed for each earlier one (Kueue's Preempted
// Events would name them, but its event spam filter drops a Workload's
// events past 25).
func (w *week) preemptors(st kueueState) map[string][]string {
	out := map[string][]string{}
	for _, q := range w.runs {
		n := st.preempted[q.name] - q.preempted
		if q.finished || n <= 0 {
			continue
		}
		last := "RayJob UID " + st.preemptor[q.name]
		if p := w.byUID[st.preemptor[q.name]]; p != nil {
			last = p.name
		}
		for range n - 1 {
			out[q.name] = append(out[q.name], "an earlier preemptor")
		}
		out[q.name] = append(out[q.name], last)
	}
	return out
}

// preemptions is how often Kueue evicted wl to preempt it.
func preemptions(wl *unstructured.Unstructured) int {
	evictions, _, _ := unstructured.NestedSlice(wl.Object, "status", "schedulingStats", "evictions")
	n := int64(0)
	for _, e := range evictions {
		if m, _ := e.(map[string]any); m["reason"] == "Preempted" {
			c, _ := m["count"].(int64)
			n += c
		}
	}
	return int(n)
}

// counted is whether every team's ClusterQueue counts in its status what
// its Workloads say (preflight reads those counts): for a moment after a
// change the two differ.
func (w *week) counted(ctx context.Context, held map[string]bool, pending map[string]int64) (bool, string, error) {
	reserving := map[string]int64{}
	for _, r := range w.runs {
		if held[r.name] {
			reserving[r.team]++
		}
	}
	var behind []string // ClusterQueues whose counts are not yet their Workloads'
	state := ""
	for team := range weekQuota {
		cq := "kweek-" + team
		got, waiting, err := kueue.Counts(ctx, w.env, cq)
		if err != nil {
			return false, "", err
		}
		if got != reserving[team] || waiting != pending[team] {
			behind = append(behind, cq)
			state = fmt.Sprintf("ClusterQueue %s counts %d reserving, %d pending; its Workloads %d, %d", cq, got, waiting, reserving[team], pending[team])
		}
	}
	if len(behind) > 0 && time.Since(w.refreshed) >= refreshEvery {
		w.refreshed = time.Now()
		for _, cq := range behind {
			if err := kueue.RefreshStatus(ctx, w.env, cq); err != nil {
				return false, "", err
			}
		}
	}
	return len(behind) == 0, state, nil
}

// active is how many runs are submitted and not gone.
func (w *week) active() int {
	n := 0
	for _, r := range w.runs {
		if !r.finished {
			n++
		}
	}
	return n
}

// conditionOf is a Workload condition's status and message.
func conditionOf(wl *unstructured.Unstructured, typ string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			status, _ = m["status"].(string)
			message, _ = m["message"].(string)
		}
	}
	return status, message
}
