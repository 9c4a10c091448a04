// Package testenv locates the shared example data and the pinned CLIs for
// tests, failing (not skipping) when CI should have provided them.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// RepoRoot is the repository root (where go.mod lives).
func RepoRoot(t testing.TB) string {
	t.Helper()
	return repoRoot()
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BuildCLI builds ./fn/cmd/nrl-k8s (static) into dir and returns its path.
// It takes no testing.TB so that TestMain can call it.
func BuildCLI(dir string, flags ...string) (string, error) {
	bin := filepath.Join(dir, "nrl-k8s")
	args := append(append([]string{"build"}, flags...), "-o", bin, "./fn/cmd/nrl-k8s")
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./fn/cmd/nrl-k8s: %v\n%s", err, out)
	}
	return bin, nil
}

// Golden compares got with a golden file, or rewrites it when update is set
// (`make golden`).
func Golden(t testing.TB, file string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("golden file %s: %v; run `make golden`", file, err)
	}
	assert.Equal(t, string(want), string(got), "%s is stale; run `make golden` and review the diff", file)
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
