// Package e2e runs the nrl-k8s binary as a user does: whole processes,
// exit codes, stdout bytes. It also holds the determinism and big-input
// tests, which must hold for the binary and for the in-process pipeline.
package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

var bin string

func TestMain(m *testing.M) { testenv.RunWithCLI(m, &bin) }

// nrl runs the binary in dir with a clean environment.
func nrl(t *testing.T, dir string, args ...string) (code int, stdout, stderr []byte) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("exec %v: %v", args, err)
	}
	return code, o.Bytes(), e.Bytes()
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
