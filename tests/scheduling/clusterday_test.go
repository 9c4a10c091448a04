package scheduling_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// TestClusterDay is the scheduling half of the cluster-day tier (a day on a
// shared 1,000-node cluster), opt-in (NRL_CLUSTER_DAY=1, make
// cluster-day-test; not in the cold CI budget): 250 NVL72 racks of 4 GB300
// nodes with their ResourceSlices, 40 CPU nodes, 5 H100 nodes (1,045) and a
// stream of 24 runs on a compressed clock (a run finishes once four later
// ones were submitted). Each run is asked of preflight --nodes before it
// is applied, on the cluster as the earlier runs left it, and compared
// pod group by pod group with where the real kube-scheduler puts it. The
// H100 runs outgrow their pool, so some are placed in part, holding GPUs.
// It logs what preflight costs on that cluster, the racks each GB300 run
// spans and the GPUs partly placed runs hold.
func TestClusterDay(t *testing.T) {
	if os.Getenv("NRL_CLUSTER_DAY") == "" {
		t.Skip("opt-in: NRL_CLUSTER_DAY=1 creates a 1,045-node cluster")
	}
	env, s := scheduler.Shared(t)
	begin := time.Now()
	f := scheduler.ClusterDay("day", 250, 4, 40, 5)
	fleet(t, env, f)
	t.Logf("%d nodes and their ResourceSlices created in %s", len(f.Nodes), time.Since(begin).Round(time.Millisecond))
	var runs []scenarioRun
	for i := range 24 {
		if i%3 == 1 {
			runs = append(runs, qwenOffKAI(t, fmt.Sprintf("day-q%02d", i)))
		} else {
			runs = append(runs, h100(t, fmt.Sprintf("day-h%02d", i)))
		}
	}
	var snap scheduler.FleetSnapshot // the fleet never changes: read once
	const window = 4
	var slowest time.Duration
	partial := 0
	for i, r := range runs {
		if i >= window {
			finish(t, env, runs[i-window])
		}
		start := time.Now()
		rep := predictWith(t, snap.Config(env.Server.Config), r)
		took := time.Since(start)
		slowest = max(slowest, took)
		pods := applyAndCompare(t, env, s, rep, r)
		racks, held, waiting := spread(t, env, pods)
		if waiting > 0 {
			partial++
		}
		t.Logf("run %s: preflight --nodes in %s; bound as it said: %d racks, %d GPUs held, %d pods waiting", r.name, took.Round(time.Millisecond), racks, held, waiting)
	}
	t.Logf("%d runs on %d nodes, each as preflight said (%d placed in part); preflight took %s at most", len(runs), len(f.Nodes), partial, slowest.Round(time.Millisecond))
}

// finish ends r as a finished run ends (its objects and pods go) and lets
// the scheduler bind what waited for the room it frees.
func finish(t *testing.T, env *operator.Env, r scenarioRun) {
	t.Helper()
	scheduler.Teardown(env, r.ns)
	require.NoError(t, operator.Wait(context.Background(), bindTimeout, r.name+"'s pods gone", func(ctx context.Context) (bool, string, error) {
		uids, err := env.PodUIDs(ctx, r.ns)
		return err == nil && len(uids) == 0, fmt.Sprintf("%d pods", len(uids)), err
	}))
	time.Sleep(scheduler.ClusterDayBackoff + 500*time.Millisecond) // past the scheduler's backoff
}

// spread is the NVLink racks (cliques) a run's bound pods span, the GPUs
// they hold, and how many of its pods wait.
func spread(t *testing.T, env *operator.Env, pods []corev1.Pod) (racks int, gpus int64, waiting int) {
	t.Helper()
	cliques := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			waiting++
			continue
		}
		for _, c := range p.Spec.Containers {
			q := c.Resources.Limits["nvidia.com/gpu"]
			gpus += q.Value()
		}
		var n corev1.Node
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &n))
		if c := n.Labels["nvidia.com/gpu.clique"]; c != "" {
			cliques[c] = true
		}
	}
	return len(cliques), gpus, waiting
}
