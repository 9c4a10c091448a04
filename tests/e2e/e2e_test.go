// Package e2e runs the nrl-k8s binary as a user does: whole processes,
// exit codes, stdout bytes. It also holds the determinism and big-input
// tests, which must hold for the binary and for the in-process pipeline.
package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

func TestMain(m *testing.M) { clirun.Main(m) }

// nrl runs the binary in dir with a clean environment.
func nrl(t *testing.T, dir string, args ...string) (code int, stdout, stderr []byte) {
	t.Helper()
	code, o, e := clirun.Exec(t, dir, t.TempDir(), nil, args...)
	return code, []byte(o), []byte(e)
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
