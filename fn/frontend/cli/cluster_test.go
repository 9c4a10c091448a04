package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
)

// deadCluster writes a kubeconfig of contexts m (current) and w1, on a port
// nothing answers, and returns its path: a case is refused before any
// request, or the request fails at once.
func deadCluster(t *testing.T) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: m, context: {cluster: c, user: u}}, {name: w1, context: {cluster: c, user: u}}]
current-context: m
`), 0o600))
	return kc
}

// The commands that read a cluster refuse a kubeconfig they cannot use, and
// a run or namespace no object can have, with exit 2 (as kubectl does);
// a cluster that does not answer is exit 2 too.
func TestClusterRefusals(t *testing.T) {
	kc := deadCluster(t)
	none := filepath.Join(t.TempDir(), "none")
	runCases(t, []cliCase{
		{name: "no kubeconfig", args: []string{"status", "r", "--kubeconfig", none}, code: cli.ExitCluster, err: "error: kubeconfig: stat " + none + ": no such file or directory"},
		{name: "unknown context", args: []string{"logs", "r", "--kubeconfig", kc, "--context", "nope"}, code: cli.ExitCluster, err: `error: kubeconfig: context "nope" does not exist`},
		{name: "run with a slash", args: []string{"status", "a/b", "--kubeconfig", kc}, code: cli.ExitUsage, err: `RUN "a/b": expected a run name, an object name usable as a label value`},
		{name: "run climbing up", args: []string{"logs", "../x", "--kubeconfig", kc}, code: cli.ExitUsage, err: `RUN "../x": expected a run name`},
		{name: "run not an object name", args: []string{"status", "Run_1", "--kubeconfig", kc}, code: cli.ExitUsage, err: `RUN "Run_1": expected a run name`},
		{name: "run not a label value", args: []string{"status", strings.Repeat("a", 64), "--kubeconfig", kc}, code: cli.ExitUsage, err: "an object name usable as a label value (must be no more than 63 bytes)"},
		{name: "empty run", args: []string{"logs", "", "--kubeconfig", kc}, code: cli.ExitUsage, err: "RUN is empty; expected a run name (its app.kubernetes.io/instance label)"},
		{name: "bad namespace", args: []string{"status", "r", "-n", "Bad_NS", "--kubeconfig", kc}, code: cli.ExitUsage, err: `-n "Bad_NS": expected a namespace name`},
		{name: "no answer", args: []string{"status", "r", "--kubeconfig", kc, "--timeout", "10s"}, code: cli.ExitCluster, err: "error: cluster unreachable: "},
	})
}
