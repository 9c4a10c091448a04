// Package shortlived paces the garbage collector for a process that renders
// and exits (the nrl-k8s CLI, the KRM function nrl-krm): one rule for both
// binaries' main functions.
package shortlived

import (
	"os"
	"runtime/debug"
)

// gcPercent paces the collector for a short-lived process: a render
// allocates a few MB and exits, so Go's default (GOGC=100) spends about a
// fifth of the run collecting garbage the exit frees anyway. 400 lets the
// heap grow to five times the live data between collections. Profiled in
// docs/performance.md.
const gcPercent = 400

// memoryLimit is the soft heap limit (the runtime collects harder as the
// heap nears it): with gcPercent the heap may grow to five times the live
// data, which for a render at its input budgets would pass 1 GB; the limit
// keeps a hostile repository's render-all under it (docs/reliability.md).
const memoryLimit = 768 << 20

// Tune sets gcPercent and memoryLimit, each unless the environment sets
// it (GOGC, GOMEMLIMIT), which still wins.
func Tune() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}
