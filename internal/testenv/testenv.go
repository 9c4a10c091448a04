// Package testenv locates the repository's vendored upstream data and the
// pinned CLIs for tests, failing (not skipping) when they should be there.
package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot is the repository root (where go.mod lives).
func RepoRoot(t testing.TB) string {
	t.Helper()
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return root
}

// Root is RepoRoot for code that has no testing.TB (a TestMain, a helper
// package's setup).
func Root() (string, error) { return root, rootErr }

// root is found once, when the process starts: go test runs a test binary
// in its package's folder, and a test may change the working directory
// later (t.Chdir). It is not taken from runtime.Caller, whose file names
// are module paths under -trimpath, the flag CI builds everything with so
// that tests, vet, lint and the binaries share one compile (.ci/run).
var root, rootErr = findRoot()

const modulePath = "github.com/nemo-rl-krm/nemo-rl-krm"

func findRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modfile(data) == modulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("testenv: no go.mod of %s in %s or above it", modulePath, wd)
		}
		d = parent
	}
}

// modfile is the module path a go.mod declares ("" if none).
func modfile(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// Recipes is recipes/: NeMo-RL's repository root as far as recipes go
// (examples/configs, examples/nemo_gym, examples/modelopt), so a recipe's
// path below it is its path in a NeMo-RL checkout.
func Recipes(t testing.TB) string {
	t.Helper()
	return mustDir(t, filepath.Join(RepoRoot(t), "recipes"))
}

// Reference is testdata/nemo-rl/reference: what NeMo-RL's own nrl-k8s
// rendered for its three GB300 examples (see testdata/nemo-rl/README.md).
func Reference(t testing.TB) string {
	t.Helper()
	return mustDir(t, filepath.Join(RepoRoot(t), "testdata", "nemo-rl", "reference"))
}

// mustDir fails (not skips) when a vendored folder is missing: a silently
// skipped acceptance test is worse than a red one.
func mustDir(t testing.TB, dir string) string {
	t.Helper()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("vendored test data not found at %s (%v); it is part of the repository", dir, err)
	}
	return dir
}

// ToolDir is the folder of a pinned tool build: $env when set, else name
// under ${NRL_TOOLS_DIR:-~/.cache/nrl-tools}, where the hack/ scripts
// build into.
func ToolDir(env, name string) (string, error) {
	if dir := os.Getenv(env); dir != "" {
		return dir, nil
	}
	if tools := os.Getenv("NRL_TOOLS_DIR"); tools != "" {
		return filepath.Join(tools, name), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s is not set and there is no home directory: %w", env, err)
	}
	return filepath.Join(home, ".cache", "nrl-tools", name), nil
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

// CopyDir copies the tree under from to to (files 0644, folders 0755).
func CopyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", from, to, err)
	}
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

// RunThenStop runs a package's tests, then stop, the shared server they
// started (the API-server and operator tiers): one that will not stop
// fails the run, naming what, as a leaked server would outlive the test
// binary. It returns the exit code for os.Exit.
func RunThenStop(m *testing.M, what string, stop func() error) int {
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop %s: %v\n", what, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
