// Command nrl-k8s renders and checks NeMo-RL runs for KubeRay; `nrl-k8s fn`
// is the same engine as a KRM function.
package main

import (
	"os"
	"runtime/debug"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// gcPercent paces the collector for a short-lived process: a render
// allocates a few MB and exits, so Go's default (GOGC=100) spends about a
// fifth of the run collecting garbage the exit frees anyway. 400 lets the
// heap grow to five times the live data between collections; an explicit
// GOGC in the environment still wins. Profiled in docs/performance.md.
const gcPercent = 400

// memoryLimit is the soft heap limit (the runtime collects harder as the
// heap nears it): with gcPercent the heap may grow to five times the live
// data, which for a render at its input budgets would pass 1 GB; the limit
// keeps a hostile repository's render-all under it (docs/reliability.md).
// An explicit GOMEMLIMIT still wins.
const memoryLimit = 768 << 20

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
	// Under the name of the kustomize plugin (a link in kustomize's plugin
	// home, made by `nrl-k8s kustomize-plugin`), the process is the plugin.
	if krm.IsKustomizePlugin(os.Args[0]) {
		os.Exit(cli.KustomizePlugin(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
