package cli_test

import (
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
)

// logs takes one RUN, --role head or worker, and --tail a count or -1.
func TestLogsRefusals(t *testing.T) {
	kc := deadCluster(t)
	runCases(t, []cliCase{
		{name: "bad role", args: []string{"logs", "r", "--role", "x", "--kubeconfig", kc}, code: cli.ExitUsage, err: "--role x: expected head or worker"},
		{name: "bad tail", args: []string{"logs", "r", "--tail", "-2", "--kubeconfig", kc}, code: cli.ExitUsage, err: "--tail -2: expected a count of lines, or -1 for all"},
		{name: "no run", args: []string{"logs", "--kubeconfig", kc}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 0"},
		{name: "two runs", args: []string{"logs", "a", "b", "--kubeconfig", kc}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 2"},
	})
}
