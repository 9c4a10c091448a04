package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// `nrl-k8s fn` is the KRM function: the ResourceList goldens of fn/frontend/krm
// are its stdout, and an error result is exit 1 with the findings on
// stderr.
func TestFnCommand(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		wantCode int
		stderr   string
	}{
		{name: "renders", fixture: "qwen-rayjob", wantCode: cli.ExitOK},
		{name: "kpt package", fixture: "kpt-package", wantCode: cli.ExitOK},
		{name: "error result fails", fixture: "bad-run", wantCode: cli.ExitError, stderr: `unknown field "spec.recipee"`},
		{name: "missing base file fails", fixture: "missing-base-file", wantCode: cli.ExitError, stderr: "base file recipes/examples/configs/grpo_math_1B.yaml not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("..", "krm", "testdata", tc.fixture)
			in, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join(dir, ".expected", "output.yaml"))
			require.NoError(t, err)
			code, stdout, stderr := clirun.RunStdin(bytes.NewReader(in), "fn")
			require.Equal(t, tc.wantCode, code, "stderr: %s", stderr)
			require.Equal(t, string(want), stdout)
			if tc.stderr == "" {
				// Warnings and notes (the Pod Security level the run needs) reach
				// kustomize users on stderr; nothing else may.
				for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
					if line != "" && !strings.Contains(line, "nrl-k8s fn: [info] ") {
						require.Contains(t, line, "nrl-k8s fn: [warning] ", "stderr carries only warnings and notes")
					}
				}
			} else {
				require.Contains(t, stderr, tc.stderr)
			}
		})
	}
}

func TestFnCommandBadInput(t *testing.T) {
	code, _, stderr := clirun.RunStdin(strings.NewReader("kind: ["), "fn")
	require.Equal(t, cli.ExitError, code)
	require.Contains(t, stderr, "failed to read ResourceList input")
}
