package kueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

func gpus(n int64) map[corev1.ResourceName]int64 { return map[corev1.ResourceName]int64{gpu: n * 1000} }

func wl(name, cq string, prio int32, n int64, reservedMin int) QueuedWorkload {
	at := time.Date(2026, 1, 1, 0, reservedMin, 0, 0, time.UTC)
	return QueuedWorkload{Name: name, ClusterQueue: cq, Priority: prio, Created: at, Reserved: at, Usage: gpus(n)}
}

func withUID(w QueuedWorkload, uid string) QueuedWorkload {
	w.UID = uid
	return w
}

func cq(name string, nominal int64, p Preemption) ClusterQueue {
	return ClusterQueue{Name: name, Nominal: gpus(nominal), Preemption: p}
}

// Kueue's classical preemption, rule by rule: the ClusterQueue's policy
// values, priorities lower, equal and higher, reclaiming a cohort's
// borrowed quota and preempting while borrowing.
func TestPredict(t *testing.T) {
	lower := Preemption{WithinClusterQueue: PolicyLowerPriority}
	newerEq := Preemption{WithinClusterQueue: PolicyLowerOrNewerEqualPriority}
	reclaim := Preemption{ReclaimWithinCohort: PolicyAny}
	reclaimLower := Preemption{ReclaimWithinCohort: PolicyLowerPriority}
	borrow := Preemption{ReclaimWithinCohort: PolicyLowerPriority, BorrowWithinCohort: PolicyLowerPriority}
	thr := int32(50)
	borrowThr := Preemption{ReclaimWithinCohort: PolicyLowerPriority, BorrowWithinCohort: PolicyLowerPriority, MaxPriorityThreshold: &thr}
	cases := []struct {
		name    string
		c       Cohort
		prio    int32
		need    int64
		admit   bool
		borrows bool
		preempt []string
	}{
		{"fits free quota", Cohort{[]ClusterQueue{cq("a", 16, Preemption{})}, nil}, 0, 8, true, false, nil},
		{"Never: queued behind a lower priority", Cohort{[]ClusterQueue{cq("a", 16, Preemption{WithinClusterQueue: PolicyNever})}, []QueuedWorkload{wl("low", "a", 10, 16, 0)}}, 100, 16, false, false, nil},
		{"default policy is Never", Cohort{[]ClusterQueue{cq("a", 16, Preemption{})}, []QueuedWorkload{wl("low", "a", 10, 16, 0)}}, 100, 16, false, false, nil},
		{"LowerPriority preempts a lower priority", Cohort{[]ClusterQueue{cq("a", 16, lower)}, []QueuedWorkload{wl("low", "a", 10, 16, 0)}}, 100, 16, true, false, []string{"low"}},
		{"LowerPriority spares an equal priority", Cohort{[]ClusterQueue{cq("a", 16, lower)}, []QueuedWorkload{wl("same", "a", 100, 16, 0)}}, 100, 16, false, false, nil},
		{"LowerPriority spares a higher priority", Cohort{[]ClusterQueue{cq("a", 16, lower)}, []QueuedWorkload{wl("high", "a", 200, 16, 0)}}, 100, 16, false, false, nil},
		{"LowerOrNewerEqualPriority spares an older equal priority", Cohort{[]ClusterQueue{cq("a", 16, newerEq)}, []QueuedWorkload{wl("same", "a", 100, 16, 0)}}, 100, 16, false, false, nil},
		{"LowerOrNewerEqualPriority preempts a lower priority", Cohort{[]ClusterQueue{cq("a", 16, newerEq)}, []QueuedWorkload{wl("low", "a", 10, 16, 0)}}, 100, 16, true, false, []string{"low"}},
		{"lowest priority first, then the newest",
			Cohort{[]ClusterQueue{cq("a", 24, lower)}, []QueuedWorkload{wl("old-low", "a", 10, 8, 0), wl("new-low", "a", 10, 8, 5), wl("mid", "a", 50, 8, 1)}}, 100, 8, true, false, []string{"new-low"}},
		{"reserved in the same second: the lower UID first, as Kueue orders, whatever the names",
			Cohort{[]ClusterQueue{cq("a", 16, lower)}, []QueuedWorkload{withUID(wl("a-first-by-name", "a", 10, 8, 0), "uid-b"), withUID(wl("z-last-by-name", "a", 10, 8, 0), "uid-a")}}, 100, 8, true, false, []string{"z-last-by-name"}},
		{"fill-back keeps the small one that need not go",
			Cohort{[]ClusterQueue{cq("a", 16, lower)}, []QueuedWorkload{wl("small", "a", 10, 4, 5), wl("big", "a", 20, 12, 0)}}, 100, 12, true, false, []string{"big"}},
		{"the server's reservation counts, listed Workloads or not",
			Cohort{[]ClusterQueue{{Name: "a", Nominal: gpus(16), Reserved: gpus(14), Preemption: lower}}, []QueuedWorkload{wl("low", "a", 10, 2, 0)}}, 100, 6, false, false, nil},
		{"preempting frees what the server reserved for it",
			Cohort{[]ClusterQueue{{Name: "a", Nominal: gpus(16), Reserved: gpus(14), Preemption: lower}}, []QueuedWorkload{wl("low", "a", 10, 2, 0)}}, 100, 4, true, false, []string{"low"}},
		{"borrows idle cohort quota", Cohort{[]ClusterQueue{cq("a", 8, Preemption{}), cq("b", 8, Preemption{})}, nil}, 0, 16, true, true, nil},
		{"borrowing limit caps it", Cohort{[]ClusterQueue{{Name: "a", Nominal: gpus(8), BorrowingLimit: gpus(4)}, cq("b", 8, Preemption{})}, nil}, 0, 16, false, false, nil},
		{"reclaim Never leaves the borrower running",
			Cohort{[]ClusterQueue{cq("a", 8, Preemption{}), cq("b", 8, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 100, 16, 0)}}, 0, 8, false, false, nil},
		{"reclaim Any takes back nominal quota whatever the priority",
			Cohort{[]ClusterQueue{cq("a", 8, reclaim), cq("b", 8, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 1000, 16, 0)}}, 0, 8, true, false, []string{"borrower"}},
		{"reclaim LowerPriority spares a higher priority borrower",
			Cohort{[]ClusterQueue{cq("a", 8, reclaimLower), cq("b", 8, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 1000, 16, 0)}}, 0, 8, false, false, nil},
		{"a ClusterQueue within its nominal quota is not reclaimed from",
			Cohort{[]ClusterQueue{cq("a", 8, reclaim), cq("b", 8, Preemption{})}, []QueuedWorkload{wl("own", "b", 0, 8, 0), wl("mine", "a", 0, 8, 0)}}, 0, 8, false, false, nil},
		{"borrowWithinCohort Never: no preemption to borrow",
			Cohort{[]ClusterQueue{cq("a", 4, reclaimLower), cq("b", 12, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 10, 16, 0)}}, 100, 8, false, false, nil},
		{"borrowWithinCohort LowerPriority preempts to borrow",
			Cohort{[]ClusterQueue{cq("a", 4, borrow), cq("b", 12, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 10, 16, 0)}}, 100, 8, true, false, []string{"borrower"}},
		{"maxPriorityThreshold spares a candidate above it while borrowing",
			Cohort{[]ClusterQueue{cq("a", 4, borrowThr), cq("b", 12, Preemption{})}, []QueuedWorkload{wl("borrower", "b", 60, 16, 0)}}, 100, 8, false, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Predict(c.c, "a", c.prio, gpus(c.need))
			assert.Equal(t, c.admit, got.Admitted, "admitted")
			assert.Equal(t, c.borrows, got.Borrowing, "borrowing")
			var names []string
			for _, w := range got.Preempt {
				names = append(names, w.Name)
			}
			assert.Equal(t, c.preempt, names)
		})
	}
}
