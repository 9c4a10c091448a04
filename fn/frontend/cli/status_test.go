package cli_test

import (
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
)

// status takes at most one RUN, -o text or json, and --watch only with a
// RUN; its namespace is checked before the list is read.
func TestStatusRefusals(t *testing.T) {
	kc := deadCluster(t)
	runCases(t, []cliCase{
		{name: "bad format", args: []string{"status", "r", "-o", "yaml", "--kubeconfig", kc}, code: cli.ExitUsage, err: "-o yaml: expected text or json"},
		{name: "two runs", args: []string{"status", "a", "b", "--kubeconfig", kc}, code: cli.ExitUsage, err: "accepts at most 1 arg(s), received 2"},
		{name: "watch without run", args: []string{"status", "--watch", "--kubeconfig", kc}, code: cli.ExitUsage, err: "--watch, --worker: expected a RUN to watch or follow"},
		{name: "list, bad namespace", args: []string{"status", "-n", "Bad_NS", "--kubeconfig", kc}, code: cli.ExitUsage, err: `-n "Bad_NS": expected a namespace name`},
	})
}
