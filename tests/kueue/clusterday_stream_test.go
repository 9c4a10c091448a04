package kueue_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// podsPerRun is the H100 Kueue profile's head and 2 workers.
const podsPerRun = 3

// predict records one prediction of r and what happened.
func (d *day) predict(r *dayRun, kind, said, happened string) {
	agree := said == happened
	if !agree {
		d.t.Logf("run %s %s: preflight said %q, happened %q", r.name, kind, said, happened)
	}
	d.report.Predictions = append(d.report.Predictions, scheduler.Prediction{Run: r.name, Kind: kind, Preflight: said, Happened: happened, Agree: agree})
}

// waitQueued is what happened to r, which preflight queued: "queued" once
// Kueue has tried it and kept it suspended (its Workload QuotaReserved
// False), "admitted now" if Kueue admitted it instead.
func (d *day) waitQueued(r *dayRun) string {
	ctx := context.Background()
	job := rayJob(d.t, d.env, r.ns, r.job)
	wl, err := kueue.Workload(ctx, d.env, job, waitFor)
	require.NoError(d.t, err)
	happened := "queued"
	require.NoError(d.t, operator.Wait(ctx, waitFor, "Kueue to decide on "+r.name, func(ctx context.Context) (bool, string, error) {
		if !rayJob(d.t, d.env, r.ns, r.job).Spec.Suspend {
			happened = "admitted now"
			return true, "", nil
		}
		if err := d.env.Server.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, "", err
		}
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "QuotaReserved" && m["status"] == "False" {
				return true, "", nil
			}
		}
		return false, "no QuotaReserved=False yet", nil
	}))
	return happened
}

// admit waits for Kueue to admit r and the scheduler to bind its Pods,
// records the run and compares the binding with preflight's placement.
// Queued runs are admitted later (finishDue); their placement is compared
// with what preflight said when they were applied.
func (d *day) admit(r *dayRun, tick int) {
	ctx := context.Background()
	said := "admitted now"
	if r.queued {
		said = "admitted once quota frees"
	}
	happened := said
	// Admitted once KubeRay has created the cluster (RayClusterOf says why
	// the name alone is not enough).
	begin := time.Now()
	cluster, err := d.env.RayClusterOf(ctx, r.ns, r.job, waitFor)
	d.report.Time("wait for admission (RayCluster created)", begin)
	r.cluster = cluster
	admission := time.Since(r.applied)
	if err != nil {
		happened = "still queued"
	}
	if !r.queued || err != nil {
		d.predict(r, "admission", said, happened)
	}
	run := scheduler.DayRun{Run: r.name, Team: r.team, Queued: r.queued, Admission: admission}
	pending := -1 // a queued run: placed as the cluster is when Kueue admits it
	if !r.queued {
		placed := 0
		for _, n := range r.placed {
			placed += n
		}
		pending = podsPerRun - placed
	}
	begin = time.Now()
	pods := d.waitBound(r, pending)
	d.report.Time("wait for the scheduler to bind", begin)
	if !r.queued && len(pods) < podsPerRun {
		d.explainMissingPods(r, pods)
	}
	run.AllBound = time.Since(r.applied)
	run.PartlyHeld, run.Racks = d.spread(pods)
	r.partial = run.PartlyHeld > 0 || len(pods) < podsPerRun
	if r.partial {
		run.AllBound = 0 // set once the rest binds (bindRest)
	} else {
		r.due = tick + r.lasts
	}
	r.rep = len(d.report.Runs)
	d.report.Runs = append(d.report.Runs, run)
	if !r.queued {
		d.predict(r, "placement", groups(r.job, r.placed), groups(r.job, bound(r.job, pods)))
	}
}

// bindRest marks the partly placed runs whose Pods are now all bound as
// running from tick (the rest bound when a finished run freed nodes);
// wait: wait for one to (the day draining, nothing else runs).
func (d *day) bindRest(tick int, wait bool) {
	defer d.report.Time("bind the rest of partly placed runs", time.Now())
	for _, r := range d.runs {
		if !r.partial {
			continue
		}
		timeout := time.Duration(0)
		if wait {
			timeout = waitFor
		}
		if len(d.waitBoundFor(r, 0, timeout)) == podsPerRun && d.allBound(r) {
			r.partial, r.due = false, tick+r.lasts
			d.report.Runs[r.rep].AllBound = time.Since(r.applied)
			wait = false
		}
	}
}

// allBound is whether every Pod of r is bound now.
func (d *day) allBound(r *dayRun) bool {
	var l corev1.PodList
	if d.env.Client.List(context.Background(), &l, client.InNamespace(r.ns), client.MatchingLabels{"ray.io/cluster": r.cluster}) != nil {
		return false
	}
	for _, p := range l.Items {
		if p.Spec.NodeName == "" {
			return false
		}
	}
	return len(l.Items) == podsPerRun
}

// waitBound waits until r's cluster has all its Pods and pending of them
// stay unschedulable with the scheduler's reason, the rest bound (pending
// < 0: each bound or unschedulable); on a timeout it returns the Pods as
// they are.
func (d *day) waitBound(r *dayRun, pending int) []corev1.Pod {
	return d.waitBoundFor(r, pending, waitFor)
}

func (d *day) waitBoundFor(r *dayRun, pending int, timeout time.Duration) []corev1.Pod {
	var pods []corev1.Pod
	_ = operator.Wait(context.Background(), max(timeout, time.Millisecond), "the scheduler to bind "+r.name, func(ctx context.Context) (bool, string, error) {
		var l corev1.PodList
		if err := d.env.Client.List(ctx, &l, client.InNamespace(r.ns), client.MatchingLabels{"ray.io/cluster": r.cluster}); err != nil {
			return false, "", err
		}
		pods = l.Items
		n, waiting := 0, 0
		for _, p := range pods {
			switch {
			case p.Spec.NodeName != "":
				n++
			case scheduler.UnschedulableReason(p) != "":
				waiting++
			}
		}
		if pending < 0 {
			return len(pods) == podsPerRun && n+waiting == podsPerRun, "", nil
		}
		return len(pods) == podsPerRun && n == podsPerRun-pending && waiting == pending, fmt.Sprintf("%d Pods, %d bound", len(pods), n), nil
	})
	return pods
}

// bound is how many of pods are bound, per pod group as preflight names it.
func bound(job string, pods []corev1.Pod) map[string]int {
	got := map[string]int{}
	for _, p := range pods {
		key := "head"
		if p.Labels["ray.io/node-type"] != "head" {
			key = "worker group " + p.Labels["ray.io/group"]
		}
		key = "RayJob/" + job + " " + key
		got[key] += 0
		if p.Spec.NodeName != "" {
			got[key]++
		}
	}
	return got
}

// groups is a placement as one comparable line: "head 1, worker group x 2".
func groups(job string, placed map[string]int) string {
	var out []string
	for k, n := range placed {
		out = append(out, fmt.Sprintf("%s %d", strings.TrimPrefix(k, "RayJob/"+job+" "), n))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// spread is the GPUs pods hold while some of them wait, and the NVLink
// racks (cliques) the bound ones span.
func (d *day) spread(pods []corev1.Pod) (held int64, racks int) {
	cliques, waiting := map[string]bool{}, false
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			waiting = true
			continue
		}
		for _, c := range p.Spec.Containers {
			q := c.Resources.Limits["nvidia.com/gpu"]
			held += q.Value()
		}
		var n corev1.Node
		if d.env.Client.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &n) == nil && n.Labels["nvidia.com/gpu.clique"] != "" {
			cliques[n.Labels["nvidia.com/gpu.clique"]] = true
		}
	}
	if !waiting {
		held = 0
	}
	return held, len(cliques)
}

// finishDue finishes the running runs due at tick (tick < 0: the one due
// first, to drain the day), then admits what Kueue admits in their place;
// false when nothing ran.
func (d *day) finishDue(tick int) bool {
	var due []*dayRun
	for _, r := range d.runs {
		if !r.finished && r.due >= 0 && (tick < 0 || r.due <= tick) {
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b *dayRun) int { return a.due - b.due })
	if tick < 0 && len(due) > 1 {
		due = due[:1]
	}
	for _, r := range due {
		d.finish(r)
		begin := time.Now()
		d.settle(r.team)
		d.report.Time("settle (Kueue decided on the team's runs)", begin)
		for _, q := range d.runs {
			if q.team == r.team && q.queued && q.due < 0 && !rayJob(d.t, d.env, q.ns, q.job).Spec.Suspend {
				d.admit(q, max(tick, 0))
			}
		}
	}
	d.bindRest(max(tick, 0), tick < 0 && len(due) == 0)
	if tick < 0 && len(due) == 0 {
		if slices.ContainsFunc(d.runs, func(r *dayRun) bool { return !r.finished && r.due >= 0 }) {
			return true // a partly placed run bound the rest: it runs now
		}
		for _, r := range d.runs {
			require.True(d.t, r.finished, "run %s never ran: the day cannot drain", r.name)
		}
	}
	return len(due) > 0
}

// finish ends r as a run ends: its Ray job succeeds (Env.EndJob), KubeRay
// completes the RayJob (Kueue then frees its quota), and the run goes
// (remove).
func (d *day) finish(r *dayRun) {
	t, ctx := d.t, context.Background()
	begin := time.Now()
	if err := operator.Wait(ctx, waitFor, "KubeRay to submit "+r.name+"'s job", func(context.Context) (bool, string, error) {
		return slices.ContainsFunc(d.env.Dashboard.Submissions(r.ns), func(s operator.Submission) bool { return s.RayJob == r.job && s.Cluster == r.cluster }), "not submitted", nil
	}); err != nil {
		d.explainMissingPods(r, nil)
		for _, s := range d.env.Dashboard.Submissions(r.ns) {
			if s.RayJob == r.job {
				t.Logf("run %s: submitted to cluster %s, not %s", r.name, s.Cluster, r.cluster)
			}
		}
		require.NoError(t, err)
	}
	d.report.Time("wait for KubeRay to submit the job", begin)
	begin = time.Now()
	require.NoError(t, d.env.EndJob(ctx, r.ns, r.job, r.cluster, rayv1.JobStatusSucceeded))
	_, err := d.env.WaitForJobDeploymentStatus(ctx, r.ns, r.job, rayv1.JobDeploymentStatusComplete, waitFor)
	require.NoError(t, err)
	d.report.Time("end the job (KubeRay completes the RayJob)", begin)
	begin = time.Now()
	d.remove(r)
	d.report.Time("remove the run", begin)
}

// remove deletes r as Git stopping it would have it go: the RayJob, its
// cluster, Pods and Workload (no garbage collector runs here).
func (d *day) remove(r *dayRun) {
	t, ctx := d.t, context.Background()
	job := rayJob(t, d.env, r.ns, r.job)
	wl, err := kueue.Workload(ctx, d.env, job, waitFor)
	require.NoError(t, err)
	require.NoError(t, client.IgnoreNotFound(d.env.Client.Delete(ctx, job)))
	if r.cluster != "" {
		require.NoError(t, client.IgnoreNotFound(d.env.Client.Delete(ctx, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: r.cluster}})))
	}
	require.NoError(t, client.IgnoreNotFound(d.env.Server.Client.Delete(ctx, wl)))
	d.podsGone(r)
	r.finished = true
}

// podsGone deletes the Pods of r's cluster until none is left, as the
// garbage collector would once KubeRay deleted the RayCluster: KubeRay may
// create a Pod between one deletion and its informer seeing the
// RayCluster go, so they are deleted again each round.
func (d *day) podsGone(r *dayRun) {
	if r.cluster == "" {
		return
	}
	require.NoError(d.t, operator.Wait(context.Background(), waitFor, r.name+"'s pods gone", func(ctx context.Context) (bool, string, error) {
		if err := d.env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(r.ns), client.MatchingLabels{"ray.io/cluster": r.cluster}, client.GracePeriodSeconds(0)); err != nil {
			return false, "", err
		}
		var l corev1.PodList
		err := d.env.Client.List(ctx, &l, client.InNamespace(r.ns), client.MatchingLabels{"ray.io/cluster": r.cluster})
		return err == nil && len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items)), err
	}))
}

// explainMissingPods logs what the harness saw of an admitted run whose
// cluster never had all its Pods (or whose job KubeRay never submitted;
// pods nil): the RayJob's and RayCluster's state, the
// Workload's conditions, the Events of the three, the Pods there were and
// Kueue's log lines naming the run, so that a disagreement of the day can
// be read back from its log.
func (d *day) explainMissingPods(r *dayRun, pods []corev1.Pod) {
	ctx := context.Background()
	var rc rayv1.RayCluster
	err := d.env.Client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.cluster}, &rc)
	if pods == nil {
		var l corev1.PodList
		_ = d.env.Client.List(ctx, &l, client.InNamespace(r.ns), client.MatchingLabels{"ray.io/cluster": r.cluster})
		pods = l.Items
	}
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, fmt.Sprintf("%s@%s %s %s", p.Name, p.Spec.NodeName, p.Status.Phase, scheduler.UnschedulableReason(p)))
	}
	d.t.Logf("run %s: %d of %d Pods after %s; RayCluster %s (get: %v) suspend %v, conditions %v, %d of %d workers ready; Pods %v",
		r.name, len(pods), podsPerRun, waitFor, r.cluster, err, rc.Spec.Suspend != nil && *rc.Spec.Suspend, rc.Status.Conditions, rc.Status.ReadyWorkerReplicas, rc.Status.DesiredWorkerReplicas, names)
	job := rayJob(d.t, d.env, r.ns, r.job)
	d.t.Logf("run %s: RayJob suspend %v, deployment %q, job %q, cluster %q, message %q", r.name, job.Spec.Suspend, job.Status.JobDeploymentStatus, job.Status.JobStatus, job.Status.RayClusterName, job.Status.Message)
	if wl, err := kueue.Workload(ctx, d.env, job, time.Second); err == nil {
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		d.t.Logf("run %s: Workload %s conditions %v", r.name, wl.GetName(), conds)
	}
	if events, err := d.env.Events(ctx, r.ns); err == nil {
		for _, e := range events {
			if o := e.InvolvedObject.Name; o == r.job || o == r.cluster || strings.HasPrefix(o, r.cluster+"-") || strings.HasPrefix(o, "rayjob-"+r.job) {
				d.t.Logf("run %s: event %s %s/%s %s: %s (x%d)", r.name, e.Type, e.InvolvedObject.Kind, o, e.Reason, e.Message, e.Count)
			}
		}
	}
	_, k := kueue.Shared(d.t)
	for line := range strings.Lines(k.Log()) {
		if strings.Contains(line, r.job) {
			d.t.Logf("run %s: kueue: %s", r.name, strings.TrimSpace(line))
		}
	}
}
