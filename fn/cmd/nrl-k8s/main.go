// Command nrl-k8s renders and checks NeMo-RL runs for KubeRay; `nrl-k8s fn`
// is the same engine as a KRM function.
package main

import (
	"os"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
