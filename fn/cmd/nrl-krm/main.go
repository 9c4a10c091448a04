// Command nrl-krm is the KRM function alone: `nrl-k8s fn` (the same flags,
// the same code, the same bytes) in a binary that links only the engine
// and the KRM adapter, none of the CLI's cobra, client-go or Helm, so a
// render does not pay their start-up (docs/performance.md, "The function alone: nrl-krm").
// It is the container image's entrypoint and the exec function of
// kustomize and kpt; under the kustomize plugin's name
// (`nrl-k8s kustomize-plugin`) it is the NemoRLRunGenerator plugin.
// `make build` writes it to bin/nrl-krm beside bin/nrl-k8s.
package main

import (
	"os"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shortlived"
)

func main() {
	shortlived.Tune()
	if krm.IsKustomizePlugin(os.Args[0]) {
		os.Exit(krm.PluginMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(krm.Main("nrl-krm", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
