package clirun

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Exec returns the exit code and output, with stdin, from an environment
// of PATH and HOME only.
func TestExec(t *testing.T) {
	t.Setenv("NRL_K8S_NAMESPACE", "from-the-developer")
	dir := t.TempDir()
	code, out, errOut := ExecBinary(t, "sh", dir, "/home/u", []byte("in"), "-c", `cat; echo "$HOME $NRL_K8S_NAMESPACE $(pwd)"; echo e >&2; exit 3`)
	require.Equal(t, 3, code)
	require.Equal(t, "in/home/u  "+dir+"\n", out)
	require.Equal(t, "e\n", errOut)
}

// In process, the CLI's exit code and output come back as a process's would.
func TestRun(t *testing.T) {
	code, out, errs := Run("version", "--short")
	require.Equal(t, 0, code, errs)
	require.NotEmpty(t, out)
	code, _, errs = Run("no-such-command")
	require.Equal(t, 2, code)
	require.NotEmpty(t, errs)
}
