// Package testenv locates the repository's vendored upstream data and the
// pinned CLIs for tests, failing (not skipping) when they should be there.
package testenv

import (
	"bytes"
	"errors"
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

func repoRoot() string { return root }

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

// BuildCLI builds ./fn/cmd/nrl-k8s (static) into dir and returns its path.
// It takes no testing.TB so that TestMain can call it.
func BuildCLI(dir string, flags ...string) (string, error) {
	return BuildBinary(dir, "nrl-k8s", flags...)
}

// BuildBinary builds ./fn/cmd/NAME (static) into dir and returns its path:
// nrl-k8s, or nrl-krm, the KRM function alone.
func BuildBinary(dir, name string, flags ...string) (string, error) {
	bin := filepath.Join(dir, name)
	args := append(append([]string{"build"}, flags...), "-o", bin, "./fn/cmd/"+name)
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./fn/cmd/%s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// Exec runs the binary bin in dir as a user would from a clean
// environment (PATH, and HOME=home: a render is a function of its inputs,
// no NRL_K8S_* from the developer) with stdin, and returns its exit code
// and output. Only a binary that cannot be run fails the test.
func Exec(t testing.TB, bin, dir, home string, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("exec %s %v: %v", bin, args, err)
	}
	return code, o.String(), e.String()
}

// RunWithCLI is a TestMain for packages that exec the CLI: it builds the
// binary into a temporary directory, points *bin at it, runs the tests and
// removes the directory.
func RunWithCLI(m *testing.M, bin *string) {
	dir, err := os.MkdirTemp("", "nrl-k8s-bin-")
	if err == nil {
		*bin, err = BuildCLI(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
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
