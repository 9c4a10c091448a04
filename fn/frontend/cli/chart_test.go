package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The chart commands' arguments and flags; recipe-merge prints the recipe
// merged with its defaults: chain, reading only inside --root.
func TestChartCommands(t *testing.T) {
	r, _ := qwen(t)
	root, dir := testenv.RepoRoot(t), t.TempDir()
	none := filepath.Join(dir, "none.yaml")
	runCases(t, []cliCase{
		{name: "chart-data argument", args: []string{"chart-data", "x"}, code: cli.ExitUsage, err: `unknown command "x" for "nrl-k8s chart-data"`},
		{name: "chart-new without --out", args: []string{"chart-new"}, code: cli.ExitUsage, err: "--out: expected the directory to write the chart to"},
		{name: "chart-new argument", args: []string{"chart-new", "x", "--out", dir}, code: cli.ExitUsage, err: `unknown command "x" for "nrl-k8s chart-new"`},
		{name: "chart-new no index", args: []string{"chart-new", "--index", none, "--out", dir}, code: cli.ExitError, err: "error: " + none + ": file not found"},
		{name: "chart-package no chart", args: []string{"chart-package"}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 0"},
		{name: "recipe-merge no recipe", args: []string{"recipe-merge"}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 0"},
		{name: "recipe-merge", args: []string{"recipe-merge", r}, out: "cluster:\n  gpus_per_node: 4\n  master_port_range_high: 1999\n"},
		{name: "recipe-merge outside --root", args: []string{"recipe-merge", r, "--root", filepath.Join(root, "profiles")}, code: cli.ExitError, err: "not a file inside the root; refused"},
	})
}

// chart-package prints the archive it writes and its sha256.
func TestChartPackage(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := clirun.Run("chart-package", filepath.Join(testenv.RepoRoot(t), "charts/nemo-rl-run"), "-d", dir)
	require.Equal(t, cli.ExitOK, code, errs)
	m := regexp.MustCompile(`^(.+/nemo-rl-run-[^/ ]+\.tgz) sha256:([0-9a-f]{64})\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.Equal(t, dir, filepath.Dir(m[1]))
	data, err := os.ReadFile(m[1])
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, m[2], hex.EncodeToString(sum[:]))
}
