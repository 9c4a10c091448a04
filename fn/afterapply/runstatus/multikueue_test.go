package runstatus

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

func TestFollowDispatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{name: "dispatched, no Pods here", r: Report{Summary: "RayJob x is Running",
			Admissions: []Admission{{Object: "RayJob/x", Worker: "worker-2"}}},
			want: "RayJob x is Running; RayJob/x was dispatched by MultiKueue to worker cluster worker-2: its Pods are there"},
		{name: "Pods here", r: Report{Summary: "s", Pods: []Pod{{Name: "p"}},
			Admissions: []Admission{{Object: "RayJob/x", Worker: "worker-2"}}}, want: "s"},
		{name: "not dispatched", r: Report{Summary: "s", Admissions: []Admission{{Object: "RayJob/x"}}}, want: "s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			followDispatch(&tc.r)
			assert.Equal(t, tc.want, tc.r.Summary)
		})
	}
}

// A dispatched RayJob whose Workload was evicted but keeps its quota past
// the grace is stuck, and the summary says why and what ends it; anything
// else keeps judge's verdict.
func TestHeldAfterEviction(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	report := func(managedBy, deployment string, evictedFor time.Duration, holds bool) Report {
		return Report{Verdict: Queued, Summary: "queued",
			RayJobs: []RayJob{{Name: "x", JobDeploymentStatus: deployment, ManagedBy: managedBy}},
			Admissions: []Admission{{Object: "RayJob/x", Kind: "Workload", Name: "wl", State: AdmissionEvicted,
				Reason: "AdmissionCheck", Message: "At least one admission check is false", HoldsQuota: holds, EvictedAt: now.Add(-evictedFor)}}}
	}
	const mk = "kueue.x-k8s.io/multikueue"
	for _, tc := range []struct {
		name string
		r    Report
		want Verdict
	}{
		{"held for a minute, the copy Initializing", report(mk, "Initializing", time.Minute, true), Stuck},
		{"within the grace", report(mk, "Initializing", 10*time.Second, true), Queued},
		{"the quota released", report(mk, "Initializing", time.Minute, false), Queued},
		{"the copy reads Suspended", report(mk, "Suspended", time.Minute, true), Queued},
		{"not dispatched", report("", "Initializing", time.Minute, true), Queued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heldAfterEviction(&tc.r, now)
			assert.Equal(t, tc.want, tc.r.Verdict)
			if tc.want == Stuck {
				assert.Equal(t, "RayJob x: Kueue evicted its Workload wl 1m0s ago (AdmissionCheck: At least one admission check is false) "+
					"but the Workload keeps its quota: Kueue requeues it once this RayJob reads inactive, and its status here (Initializing) "+
					"is MultiKueue's copy of a worker's, last from the worker that ran it, which no longer reports (Kueue v0.17.0, "+
					"kubernetes-sigs/kueue#15380). It changes only when that worker answers again or another worker admits the run's copy; "+
					"deleting this RayJob on the manager (its Workload with it) and letting Git recreate it queues the run afresh", tc.r.Summary)
			} else {
				assert.Equal(t, "queued", tc.r.Summary)
			}
		})
	}
}

// unschedulablePod is a Pending Pod of run1's RayCluster the scheduler
// found no node for; its message is the worker's, hostile.
func unschedulablePod(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod",%s,"spec":{"containers":[{"name":"ray-worker","image":"i"}]},`+
		`"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes\n::error::forged"}]}}`,
		meta(name, "p-"+name, "run1", "RayCluster/c1", ""))
}

// On a manager, status follows a dispatched run to the worker the user
// gave a connection for: the worker's RayJob, Pods and reasons, labelled
// as the worker's, its verdict the run's; a worker not given or not
// answering is said, and the manager's report stands.
func TestFollow(t *testing.T) {
	onWorker := fakeCluster{
		jobsPath:     list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Initializing")),
		clustersPath: list("ray.io/v1", "RayCluster", cluster("run1-c", "c1", "run1", "RayJob/j1")),
		podsPath:     list("v1", "Pod", unschedulablePod("run1-c-worker-0")),
	}
	down := fakeCluster{jobsPath: status(503, "ServiceUnavailable")}
	manager := func() Report {
		return Report{Run: "run1", Namespace: "ml", Verdict: Running, Summary: "RayJob run1 is Running",
			Admissions: []Admission{{Object: "RayJob/run1", Kind: "Workload", Name: "wl", State: AdmissionAdmitted, Worker: "w1"}}}
	}
	for _, tc := range []struct {
		name    string
		workers map[string]fakeCluster
		report  func() Report
		verdict Verdict
		summary string
		text    []string
	}{
		{name: "the worker's Pods and why they wait", workers: map[string]fakeCluster{"w1": onWorker}, report: manager, verdict: Stuck,
			summary: "RayJob/run1 runs on worker cluster w1: RayJob run1 is Initializing: ",
			text: []string{"On worker cluster w1 (MultiKueue dispatched the run there):\n  run run1 in namespace ml: stuck",
				"  Pods: 1 Pending\n", `Unschedulable: 0/3 nodes\n::error::forged`}},
		{name: "worker not given", workers: map[string]fakeCluster{"w2": onWorker}, report: manager, verdict: Running,
			summary: "RayJob run1 is Running", text: []string{"On worker cluster w1 (MultiKueue dispatched the run there):\n  not read: no --worker w1=CONTEXT was given\n"}},
		{name: "worker not answering", workers: map[string]fakeCluster{"w1": down}, report: manager, verdict: Running,
			summary: "RayJob run1 is Running", text: []string{"  not read: the worker did not answer: API server error (503)"}},
		{name: "the run is not on the worker", workers: map[string]fakeCluster{"w1": {}}, report: manager, verdict: Running,
			summary: "RayJob run1 is Running", text: []string{"  the run is not (or no longer) on the worker: nothing labelled"}},
		{name: "not dispatched: its Pods are here", workers: map[string]fakeCluster{"w1": onWorker}, verdict: Running, summary: "s",
			report: func() Report {
				return Report{Run: "run1", Namespace: "ml", Verdict: Running, Summary: "s", Pods: []Pod{{Name: "p"}},
					Admissions: []Admission{{Object: "RayJob/run1", Worker: "w1"}}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conns := map[string]*kube.Conn{}
			for name, f := range tc.workers {
				conns[name] = conn(t, f)
			}
			r := tc.report()
			Follow(context.Background(), &r, conns, time.Now())
			assert.Equal(t, tc.verdict, r.Verdict)
			assert.True(t, strings.HasPrefix(r.Summary, tc.summary), r.Summary)
			text := r.Text()
			for _, want := range tc.text {
				assert.Contains(t, text, want)
			}
			if len(tc.text) == 0 {
				assert.Nil(t, r.Worker)
				assert.NotContains(t, text, "On worker cluster")
			}
			assert.NotContains(t, text, "\n::error", "a worker's text never starts a line")
		})
	}
}
