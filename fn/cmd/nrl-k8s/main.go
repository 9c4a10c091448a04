// Command nrl-k8s renders and checks NeMo-RL runs for KubeRay; `nrl-k8s fn`
// is the same engine as a KRM function (fn/cmd/nrl-krm is that function
// alone, without the CLI's other commands and their dependencies).
package main

import (
	"os"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shortlived"
)

func main() {
	shortlived.Tune()
	// Under the name of the kustomize plugin (a link in kustomize's plugin
	// home, made by `nrl-k8s kustomize-plugin`), the process is the plugin.
	if krm.IsKustomizePlugin(os.Args[0]) {
		os.Exit(krm.PluginMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
