package scheduling_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// TestClusterDay is the first step of issue 47's cluster-day tier, opt-in
// (NRL_CLUSTER_DAY=1; not in the cold CI budget): the 1,000-node
// cluster (250 NVL72 racks of 4 GB300 nodes with their ResourceSlices, 40
// CPU nodes, 10 H100 nodes: 1,050 nodes) and a stream of runs, each asked
// of preflight --nodes before it is applied, on the cluster as the earlier
// runs left it, and compared pod group by pod group with where the real
// kube-scheduler puts it. The H100 runs outgrow their pool, so the last
// is placed in part. It logs what preflight costs on that cluster.
func TestClusterDay(t *testing.T) {
	if os.Getenv("NRL_CLUSTER_DAY") == "" {
		t.Skip("opt-in: NRL_CLUSTER_DAY=1 creates a 1,050-node cluster")
	}
	env, s := scheduler.Shared(t)
	begin := time.Now()
	f := scheduler.ClusterDay("day", 250, 4, 40, 10)
	fleet(t, env, f)
	t.Logf("%d nodes and their ResourceSlices created in %s", len(f.Nodes), time.Since(begin).Round(time.Millisecond))
	var runs []scenarioRun
	for i := range 6 {
		runs = append(runs, h100(t, fmt.Sprintf("day-h%d", i)))
		if i < 4 {
			runs = append(runs, qwenOffKAI(t, fmt.Sprintf("day-q%d", i)))
		}
	}
	var slowest time.Duration
	for _, r := range runs {
		start := time.Now()
		rep := predict(t, env, r)
		took := time.Since(start)
		slowest = max(slowest, took)
		applyAndCompare(t, env, s, rep, r)
		t.Logf("run %s: preflight --nodes in %s, then bound as it said", r.name, took.Round(time.Millisecond))
	}
	t.Logf("%d runs on %d nodes, each as preflight said; preflight took %s at most", len(runs), len(f.Nodes), slowest.Round(time.Millisecond))
}
