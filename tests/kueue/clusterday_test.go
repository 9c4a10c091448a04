package kueue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// The day's teams: each a namespace with the LocalQueue lab-queue on a
// ClusterQueue of its own, with quota for this many runs of the H100 Kueue
// profile (16 GPUs each). A run's team is dayTeams[i%8]: team a submits
// half the runs, b a quarter, c and d an eighth each.
var (
	dayQuota = map[string]int{"a": 3, "b": 2, "c": 1, "d": 1}
	dayTeams = "aabacabd"
)

// dayH100 is the H100 pool: room for 5 runs' workers, two fewer than the
// teams' quotas add up to, so a run Kueue admits can find its nodes taken
// and wait in part, holding the GPUs of the workers that were placed.
const dayH100 = 10

// dayRun is one run of the day: its team, render, what preflight said
// before it was applied, and where it is in its life.
type dayRun struct {
	name, team, ns, job, cluster string
	docs                         []rendered.Doc
	objs                         []*unstructured.Unstructured
	queued                       bool           // preflight's LocalQueue line: queued (until others finish, or behind one)
	placed                       map[string]int // preflight's Nodes lines, per pod group
	lasts                        int            // submissions it runs for once bound
	due                          int            // the submission at which it finishes; -1 until it runs
	applied                      time.Time
	partial                      bool // some Pods bound, some wait for nodes
	finished                     bool
	rep                          int // its line in the report
}

// day is the stream's state and its report.
type day struct {
	t      *testing.T
	env    *operator.Env
	runs   []*dayRun
	report scheduler.DayReport
	fleet  scheduler.FleetSnapshot // the fleet's reads, answered once
}

// TestClusterDayQueued is the queued half of the cluster-day tier (a day on
// a shared 1,000-node cluster), opt-in (NRL_CLUSTER_DAY=1, make
// cluster-day-test): Kueue's manager, KubeRay's reconcilers and the real
// kube-scheduler (percentageOfNodesToScore: 10, bound Pods marked Running
// and Ready by an informer) on that cluster (250 NVL72 racks of 4 GB300
// nodes, 40 CPU and 10 H100 nodes), and a stream of NRL_CLUSTER_DAY_RUNS runs (200 unless set) of the
// shipped H100 Kueue profile, four teams' users submitting one run after
// another (the compressed clock: one tick a submission). Before each apply
// preflight says whether Kueue admits the run now or queues it, and where
// its Pods go; a run lasts a few ticks once bound, then its Ray job
// succeeds (operator.Dashboard.Finish), KubeRay completes the RayJob, its
// quota frees and Kueue admits the team's next queued run. The report
// (per run: time to admission and to all Pods bound, GPUs held while
// partly placed, racks; per prediction: preflight vs what happened) is
// logged as a table and written as JSON to NRL_CLUSTER_DAY_REPORT (a
// temporary file named in the log unless set); at least 99% of the
// predictions must hold.
func TestClusterDayQueued(t *testing.T) {
	n := streamRuns(t, "NRL_CLUSTER_DAY_RUNS", 200)
	t.Cleanup(operator.PollEvery(streamPoll))
	begin := time.Now()
	d := &day{t: t, env: startDay(t)}
	d.report.Nodes = 250*4 + 40 + dayH100
	t.Cleanup(func() { d.write(begin, "NRL_CLUSTER_DAY_REPORT", "clusterday.json") }) // a day that fails part way is reported as far as it went
	for i := range n {
		d.finishDue(i)
		d.submit(i)
	}
	for d.finishDue(-1) {
	}
	require.GreaterOrEqual(t, d.report.Percent(), 99.0, "preflight's agreement with what happened")
}

// streamPoll is how often a stream's waits poll: each of its runs waits
// about seven times, most of them a tick or two.
const streamPoll = 25 * time.Millisecond

// streamRuns skips a stream unless NRL_CLUSTER_DAY is set, and returns
// how many runs it has: $env, or n.
func streamRuns(t *testing.T, env string, n int) int {
	if os.Getenv("NRL_CLUSTER_DAY") == "" {
		t.Skip("opt-in: NRL_CLUSTER_DAY=1 creates a 1,050-node cluster")
	}
	if v := os.Getenv(env); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "%s: a number of runs", env)
	}
	return n
}

// write logs the report as a table and writes it as JSON to the file
// $env names, or to a temporary file it names.
func (d *day) write(begin time.Time, env, file string) {
	t := d.t
	d.report.Wall = time.Since(begin)
	t.Log("\n" + d.report.Table())
	path := os.Getenv(env)
	if path == "" {
		dir, err := os.MkdirTemp("", "nrl-clusterday-")
		if err != nil {
			t.Error(err)
			return
		}
		path = filepath.Join(dir, file)
	}
	if err := d.report.Write(path); err != nil {
		t.Error(err)
		return
	}
	t.Logf("report written to %s", path)
}

// dayFleet is the fleet the day and the week share, created once a test
// binary (1,050 Nodes and 2,000 ResourceSlices are a fifth of a day's
// requests). Its Nodes go with the API server: a test of this binary run
// after the day, with NRL_CLUSTER_DAY set, sees them.
var dayFleet = fixtures.Env[scheduler.Fleet]{
	Name: "the cluster-day fleet",
	Start: func(t testing.TB) (scheduler.Fleet, error) {
		env, _ := kueue.Shared(t)
		begin := time.Now()
		f := scheduler.ClusterDay("kday", 250, 4, 40, dayH100)
		if _, err := scheduler.Create(context.Background(), env, f); err != nil {
			return f, err
		}
		t.Logf("%d nodes and their ResourceSlices created in %s", len(f.Nodes), time.Since(begin).Round(time.Millisecond))
		return f, nil
	},
	Stop: func(scheduler.Fleet) error { return nil },
}

// startCluster starts the scheduler as the tier runs it, for this test, on
// the shared fleet.
func startCluster(t *testing.T) *operator.Env {
	env, _ := kueue.Shared(t)
	dayFleet.Get(t)
	assets, err := apiserver.Assets()
	require.NoError(t, err)
	s, err := scheduler.StartWith(env, assets, scheduler.Options{PercentageOfNodesToScore: 10, ShortBackoff: true, MarkReady: true, CollectOrphans: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	return env
}

// startDay starts the cluster and creates the teams' queues.
func startDay(t *testing.T) *operator.Env {
	env := startCluster(t)
	ctx := context.Background()
	for team, runs := range dayQuota {
		ns := "kday-" + team
		_, objs, _ := renderFor(t, ns, ns, "setup")
		require.NoError(t, scheduler.SetUp(ctx, env, ns, objs)) // its ServiceAccounts and bound claims
		require.NoError(t, kueue.Queue(ctx, env, ns, "lab-queue", ns, strconv.Itoa(16*runs), waitFor))
		t.Cleanup(func() { scheduler.Teardown(env, ns) })
	}
	return env
}

// settle waits for Kueue to have decided on every run of team: as many
// reserving quota as fit, the rest pending.
func (d *day) settle(team string) {
	n := d.active(team)
	reserving(d.t, d.env, "kday-"+team, min(n, dayQuota[team]), max(n-dayQuota[team], 0))
}

// active is how many of team's runs are submitted and not finished.
func (d *day) active(team string) int {
	n := 0
	for _, r := range d.runs {
		if r.team == team && !r.finished {
			n++
		}
	}
	return n
}

// submit renders run i for its team and user into the team's namespace,
// waits for Kueue to have settled the team's queue, asks preflight, applies
// the run and checks what preflight said.
func (d *day) submit(i int) {
	t := d.t
	team := string(dayTeams[i%len(dayTeams)])
	r := &dayRun{name: fmt.Sprintf("kday-%03d", i), team: team, ns: "kday-" + team, lasts: 2 + (i*7)%6, due: -1}
	begin := time.Now()
	r.docs, r.objs, r.job = renderFor(t, r.name, r.ns, fmt.Sprintf("user-%s%d", team, i%3))
	d.report.Time("render", begin)
	begin = time.Now()
	d.settle(team)
	d.report.Time("settle (Kueue decided on the team's runs)", begin)
	begin = time.Now()
	in, err := preflight.InputOf(r.docs, "", r.ns)
	require.NoError(t, err)
	in.Nodes = true
	c, err := kube.FromConfig(d.fleet.Config(d.env.Server.Config), r.ns, kube.Options{})
	require.NoError(t, err)
	rep, err := preflight.Run(context.Background(), c, in)
	require.NoError(t, err)
	r.queued, r.placed = readPreflight(t, rep, r.job)
	d.report.Time("preflight", begin)
	begin = time.Now()
	require.NoError(t, d.env.Apply(context.Background(), r.ns, r.objs))
	r.applied = time.Now()
	d.report.Time("apply", begin)
	d.runs = append(d.runs, r)
	if r.queued {
		begin = time.Now()
		d.predict(r, "admission", "queued", d.waitQueued(r))
		d.report.Time("wait for Kueue to queue", begin)
		return
	}
	d.admit(r, i)
}

// renderFor renders the shipped H100 Kueue profile as run name of user in
// namespace ns.
func renderFor(t *testing.T, name, ns, user string) ([]rendered.Doc, []*unstructured.Unstructured, string) {
	t.Helper()
	run := fixtures.As(runparams.RayJob)
	run.Name, run.User = name, user
	req := fixtures.Request(fixtures.ShippedProfile(t, "h100-kueue-2n8g"), run)
	req.Namespace = ns
	docs := fixtures.Render(t, req)
	b, err := emit.Stream(docs)
	require.NoError(t, err)
	objs, err := fixtures.Decode(b)
	require.NoError(t, err)
	job := ""
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			job = o.GetName()
		}
	}
	return docs, objs, job
}

// readPreflight is whether preflight's LocalQueue line queues the run, and
// how many Pods of each of job's pod groups its Nodes lines place.
func readPreflight(t *testing.T, rep preflight.Report, job string) (queued bool, placed map[string]int) {
	t.Helper()
	placed = map[string]int{}
	for _, l := range rep.Lines {
		switch l.Kind {
		case "LocalQueue":
			queued = strings.Contains(l.Detail, ": queued ") // until others finish, or behind a pending run
		case "Nodes":
			if !strings.HasPrefix(l.Name, "RayJob/"+job+" ") || strings.HasSuffix(l.Name, " submitter") {
				continue // the submitter: KubeRay's HTTP mode posts the job itself
			}
			m := placedRE.FindStringSubmatch(l.Detail)
			require.NotNil(t, m, "%s: %s", l.Name, l.Detail)
			placed[l.Name], _ = strconv.Atoi(m[1] + m[2])
		}
	}
	return queued, placed
}

// reserving waits until ClusterQueue cq counts n Workloads reserving
// quota and pending more waiting for it: what preflight reads of it is
// what Kueue decided. Both counts: for a moment after a run finishes, the
// ClusterQueue still counts its quota reserved and has not admitted the
// next run, and a preflight asked then says "queued" of a run Kueue
// admits a second later.
// Until they match, the ClusterQueue is refreshed now and then
// (kueue.RefreshStatus): its status would otherwise follow a second late.
func reserving(t *testing.T, env *operator.Env, cq string, n, pending int) {
	t.Helper()
	var refreshed time.Time
	require.NoError(t, operator.Wait(context.Background(), waitFor, fmt.Sprintf("ClusterQueue %s reserving for %d Workloads, %d pending", cq, n, pending), func(ctx context.Context) (bool, string, error) {
		got, waiting, err := kueue.Counts(ctx, env, cq)
		if err != nil {
			return false, "", err
		}
		done := got == int64(n) && waiting == int64(pending)
		if !done && time.Since(refreshed) >= refreshEvery {
			refreshed = time.Now()
			return false, "", kueue.RefreshStatus(ctx, env, cq)
		}
		return done, fmt.Sprintf("%d reserving, %d pending", got, waiting), nil
	}))
}

// refreshEvery is how long a harness waits for a refreshed
// ClusterQueue's status before it refreshes it again.
const refreshEvery = 200 * time.Millisecond
