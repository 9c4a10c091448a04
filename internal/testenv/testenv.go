// Package testenv locates the shared example data and the pinned CLIs for
// tests, failing (not skipping) when CI should have provided them.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot is the repository root (where go.mod lives).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Examples is ../shared/nemo-rl-examples. A missing folder fails the test:
// a silently skipped acceptance test is worse than a red one.
func Examples(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "..", "shared", "nemo-rl-examples")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("shared examples not found at %s: %v (tests need ../shared beside the checkout)", dir, err)
	}
	return dir
}

// Tool returns the path of a pinned CLI named by env (e.g. NRL_HELM3). When
// it is missing the test is skipped locally but fails under CI=true.
func Tool(t testing.TB, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p != "" {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set to an installed CLI; .ci/run installs it via hack/tools.sh", env)
	}
	t.Skipf("%s not set; run `make test` (hack/tools.sh installs the pinned CLIs)", env)
	return ""
}

// ReadFile reads a file or fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}
