package kueue_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// dayRun is one run of the queued day: its team, namespace, render, and
// what preflight said before it was applied.
type dayRun struct {
	name, team, ns, job string
	docs                []rendered.Doc
	objs                []*unstructured.Unstructured
	queued              bool           // the LocalQueue line: queued until others finish
	placed              map[string]int // the Nodes lines, per pod group
	applied             time.Time
}

// TestClusterDayQueued is the queued half of issue 47's cluster-day tier,
// opt-in (NRL_CLUSTER_DAY=1): Kueue's manager, KubeRay's reconcilers and
// the real kube-scheduler on the 1,050-node cluster, two teams each with a
// ClusterQueue of 32 GPUs (two runs of the H100 Kueue profile), and four
// runs a team submitted one after another. Before each apply preflight
// says whether Kueue admits the run now or queues it, and where its pods
// go; then the first runs finish, on a compressed clock, and the queued
// ones are admitted. Every prediction is compared with what happened, and
// each run's time to admission and to all pods bound is logged.
func TestClusterDayQueued(t *testing.T) {
	if os.Getenv("NRL_CLUSTER_DAY") == "" {
		t.Skip("opt-in: NRL_CLUSTER_DAY=1 creates a 1,050-node cluster")
	}
	env, _ := kueue.Shared(t)
	assets, err := apiserver.Assets()
	require.NoError(t, err)
	s, err := scheduler.Start(env, assets)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	ctx := context.Background()
	cleanup, err := scheduler.Create(ctx, env, scheduler.ClusterDay("kday", 250, 4, 40, 10))
	require.NoError(t, err)
	t.Cleanup(cleanup)
	for _, team := range []string{"a", "b"} {
		teamQueue(t, env, "kday-"+team, "32")
	}
	// A team submits a run once it has seen its last one admitted or
	// queued, as a user would.
	var runs []*dayRun
	agree, admitted := 0, map[string]int{}
	for i := range 4 {
		for _, team := range []string{"a", "b"} {
			reserving(t, env, "kday-"+team, admitted[team])
			r := submit(t, env, team, i)
			runs = append(runs, r)
			if !r.queued {
				admitted[team]++
				if settled(t, env, s, r) {
					agree++
				}
				continue
			}
			time.Sleep(2 * time.Second) // Kueue has had its chance to admit it
			if assert.True(t, rayJob(t, env, r.ns, r.job).Spec.Suspend, "run %s: preflight said queued, Kueue admitted it", r.name) {
				agree++
			}
		}
	}
	// The clock moves on: each team's first two runs finish, and its
	// queued runs are admitted and bound.
	for _, r := range runs[:4] {
		finish(t, env, r)
	}
	for _, r := range runs[4:] {
		r.placed = nil // placed as the cluster is when Kueue admits it
		if settled(t, env, s, r) {
			agree++
		}
	}
	t.Logf("%d of %d predictions as preflight said", agree, len(runs)*2-4)
	require.Equal(t, len(runs)*2-4, agree)
}

// teamQueue is a ClusterQueue named cq with gpus GPUs of the default
// flavor (kueue.Flavor), for every namespace.
func teamQueue(t *testing.T, env *operator.Env, cq, gpus string) {
	t.Helper()
	const api = "kueue.x-k8s.io/v1beta2"
	for _, o := range []map[string]any{
		{"apiVersion": api, "kind": "ResourceFlavor", "metadata": map[string]any{"name": kueue.Flavor}},
		{"apiVersion": api, "kind": "ClusterQueue", "metadata": map[string]any{"name": cq},
			"spec": map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
				"flavors": []any{map[string]any{"name": kueue.Flavor, "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "1000"},
					map[string]any{"name": "memory", "nominalQuota": "100Ti"},
					map[string]any{"name": "nvidia.com/gpu", "nominalQuota": gpus},
				}}}}}}},
	} {
		u := &unstructured.Unstructured{Object: o}
		if err := env.Server.Client.Create(context.Background(), u); err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		if u.GetKind() == "ClusterQueue" {
			t.Cleanup(func() { _ = env.Server.Client.Delete(context.Background(), u) })
		}
	}
}

// submit renders run i of team into a namespace of its own with a
// LocalQueue on the team's ClusterQueue, asks preflight, and applies it.
func submit(t *testing.T, env *operator.Env, team string, i int) *dayRun {
	t.Helper()
	ctx := context.Background()
	r := &dayRun{name: fmt.Sprintf("kday-%s%d", team, i), team: team}
	r.ns = r.name
	r.docs, r.objs, r.job = render(t, r.name, r.ns, runparams.RayJob)
	require.NoError(t, scheduler.SetUp(ctx, env, r.ns, r.objs))
	lq := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": "lab-queue", "namespace": r.ns}, "spec": map[string]any{"clusterQueue": "kday-" + team}}}
	require.NoError(t, env.Server.Client.Create(ctx, lq))
	t.Cleanup(func() { scheduler.Teardown(env, r.ns) })

	in, err := preflight.InputOf(r.docs, "", r.ns)
	require.NoError(t, err)
	in.Nodes = true
	rep, err := preflight.Run(ctx, conn(t, env, r.ns), in)
	require.NoError(t, err)
	r.placed = map[string]int{}
	for _, l := range rep.Lines {
		switch l.Kind {
		case "LocalQueue":
			r.queued = strings.Contains(l.Detail, "queued until other Workloads finish")
		case "Nodes":
			if !strings.HasPrefix(l.Name, "RayJob/"+r.job+" ") || strings.HasSuffix(l.Name, " submitter") {
				continue // the submitter comes once the head is ready, which no kubelet here makes it
			}
			m := placedRE.FindStringSubmatch(l.Detail)
			require.NotNil(t, m, "%s: %s", l.Name, l.Detail)
			r.placed[l.Name], _ = strconv.Atoi(m[1] + m[2])
		}
	}
	require.NoError(t, env.Apply(ctx, r.ns, r.objs))
	r.applied = time.Now()
	return r
}

// settled waits for Kueue to admit r and the scheduler to bind its pods
// as preflight placed them (all of them, when placed is nil), and logs how
// long each took; false when they differ.
func settled(t *testing.T, env *operator.Env, s *scheduler.Scheduler, r *dayRun) bool {
	t.Helper()
	ctx := context.Background()
	err := operator.Wait(ctx, waitFor, "Kueue to admit "+r.name, func(ctx context.Context) (bool, string, error) {
		j := rayJob(t, env, r.ns, r.job)
		return !j.Spec.Suspend, "suspended", nil
	})
	if !assert.NoError(t, err, "run %s: preflight said Kueue admits it now", r.name) {
		return false
	}
	admitted := time.Since(r.applied)
	placed := 0
	for _, n := range r.placed {
		placed += n
	}
	pending := 0
	if r.placed != nil {
		pending = 3 - placed
	}
	pods, err := s.WaitScheduled(ctx, env, r.ns, 3, pending, waitFor)
	if !assert.NoError(t, err, "run %s", r.name) {
		return false
	}
	t.Logf("run %s (team %s): admitted %s after apply, its pods bound %s after apply", r.name, r.team, admitted.Round(time.Millisecond), time.Since(r.applied).Round(time.Millisecond))
	if r.placed == nil {
		return true
	}
	got := map[string]int{}
	for _, p := range pods {
		key := "head"
		if p.Labels["ray.io/node-type"] != "head" {
			key = "worker group " + p.Labels["ray.io/group"]
		}
		key = "RayJob/" + r.job + " " + key
		got[key] += 0
		if p.Spec.NodeName != "" {
			got[key]++
		}
	}
	return assert.Equal(t, r.placed, got, "run %s: preflight's placement and the scheduler's", r.name)
}

// reserving waits until ClusterQueue cq counts n Workloads reserving
// quota: what preflight reads of it is what Kueue decided.
func reserving(t *testing.T, env *operator.Env, cq string, n int) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), waitFor, fmt.Sprintf("ClusterQueue %s reserving for %d Workloads", cq, n), func(ctx context.Context) (bool, string, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("kueue.x-k8s.io/v1beta2")
		u.SetKind("ClusterQueue")
		if err := env.Server.Client.Get(ctx, client.ObjectKey{Name: cq}, u); err != nil {
			return false, "", err
		}
		got, _, _ := unstructured.NestedInt64(u.Object, "status", "reservingWorkloads")
		return got == int64(n), fmt.Sprintf("%d reserving", got), nil
	}))
}

// finish ends r as a finished run ends: its RayJob and pods go, and its
// Workload, which the garbage collector would delete with the RayJob that
// owns it (no kube-controller-manager runs here), so Kueue frees its quota.
func finish(t *testing.T, env *operator.Env, r *dayRun) {
	t.Helper()
	scheduler.Teardown(env, r.ns)
	wl := &unstructured.Unstructured{}
	wl.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	wl.SetKind("Workload")
	require.NoError(t, env.Server.Client.DeleteAllOf(context.Background(), wl, client.InNamespace(r.ns)))
	require.NoError(t, operator.Wait(context.Background(), waitFor, r.name+"'s pods gone", func(ctx context.Context) (bool, string, error) {
		uids, err := env.PodUIDs(ctx, r.ns)
		return err == nil && len(uids) == 0, fmt.Sprintf("%d pods", len(uids)), err
	}))
}
