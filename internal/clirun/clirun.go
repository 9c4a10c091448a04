// Package clirun is the one way tests run the nrl-k8s CLI: in this process
// (Run, cli.Main with buffers) when the test needs no process of its own,
// and a binary built once per test binary (Binary, Exec, Main) when it does:
// an exec plugin, kpt or kustomize calling it, an exit status, a clean
// environment.
package clirun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Run runs `nrl-k8s args...` in this process with an empty stdin and
// returns its exit code and output.
func Run(args ...string) (code int, stdout, stderr string) {
	return RunStdin(strings.NewReader(""), args...)
}

// RunStdin is Run reading stdin.
func RunStdin(stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = cli.Main(args, stdin, &o, &e)
	return code, o.String(), e.String()
}

// Build builds ./fn/cmd/nrl-k8s (static, go flags as given) into dir and
// returns its path. It takes no testing.TB so that a TestMain or a
// benchmark's setup can call it.
func Build(dir string, flags ...string) (string, error) {
	return BuildNamed(dir, CLI, flags...)
}

// The binaries of fn/cmd a test may build: the CLI, and the KRM function
// alone.
const (
	CLI  = "nrl-k8s"
	Lean = "nrl-krm"
)

// BuildNamed builds ./fn/cmd/NAME (CLI or Lean; static, go flags as given)
// into dir and returns its path.
func BuildNamed(dir, name string, flags ...string) (string, error) {
	return build(filepath.Join(dir, name), name, nil, flags...)
}

// BuildForImage builds a binary the function's image ships (CLI or Lean),
// as `make image` does: linux/amd64, static, -trimpath, with ldflags, into
// dir as NAME-linux-amd64.
func BuildForImage(dir, name, ldflags string) (string, error) {
	return build(filepath.Join(dir, name+"-linux-amd64"), name, []string{"GOOS=linux", "GOARCH=amd64"}, "-trimpath", "-ldflags", ldflags)
}

func build(bin, name string, env []string, flags ...string) (string, error) {
	root, err := testenv.Root()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, "./fn/cmd/"+name)...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./fn/cmd/%s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// The binaries a test binary builds, each once, on first use, into one
// directory (nrl-k8s kustomize-plugin links nrl-krm when it is beside it).
var (
	mu     sync.Mutex
	binDir string
	built  = map[string]string{}
)

// Binary is nrl-k8s built for this test binary, on first use; Main removes it.
func Binary(t testing.TB) string {
	t.Helper()
	return BinaryNamed(t, CLI)
}

// BinaryNamed is ./fn/cmd/NAME (CLI or Lean) built for this test binary, on
// first use, beside the others; Main removes them.
func BinaryNamed(t testing.TB, name string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := built[name]; ok {
		return bin
	}
	var err error
	if binDir == "" {
		if binDir, err = os.MkdirTemp("", "nrl-k8s-bin-"); err != nil {
			binDir = ""
			t.Fatal(err)
		}
	}
	bin, err := BuildNamed(binDir, name)
	if err != nil {
		t.Fatal(err)
	}
	built[name] = bin
	return bin
}

// Main is the TestMain of a package that calls Binary: it runs the tests,
// then removes the binary.
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Exec runs Binary in dir as a user would from a clean environment (PATH,
// and HOME=home: a render is a function of its inputs, no NRL_K8S_* from
// the developer) with stdin, and returns its exit code and output. Only a
// binary that cannot be run fails the test.
func Exec(t testing.TB, dir, home string, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return ExecBinary(t, Binary(t), dir, home, stdin, args...)
}

// ExecBinary is Exec of another binary (BinaryNamed's, or one a test built).
func ExecBinary(t testing.TB, bin, dir, home string, stdin []byte, args ...string) (code int, stdout, stderr string) {
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
		t.Fatalf("exec %s %v: %v", cmd.Path, args, err)
	}
	return code, o.String(), e.String()
}
