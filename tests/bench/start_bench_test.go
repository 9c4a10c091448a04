package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

var (
	leanOnce sync.Once
	leanPath string
	leanErr  error
)

// nrlKRM builds the KRM function's own binary once, with the flags of
// nrlK8s, into its own directory.
func nrlKRM(b *testing.B) string {
	leanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-bin-")
		if err != nil {
			leanErr = err
			return
		}
		leanPath, leanErr = clirun.BuildNamed(dir, clirun.Lean, "-trimpath", "-ldflags", "-s -w")
	})
	if leanErr != nil {
		b.Fatal(leanErr)
	}
	return leanPath
}

// floorBinary builds testdata/floor: a binary linking only the types and
// YAML package a render cannot do without, doing nothing.
func floorBinary(b *testing.B) string {
	dir := b.TempDir()
	bin := filepath.Join(dir, "floor")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./testdata/floor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./testdata/floor: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkFunctionProcess is one whole function process as kustomize and
// kpt start it: the README example's run (qwen3-30b, rayjob) as a
// ResourceList on stdin, through `nrl-k8s fn` (the CLI) and through nrl-krm
// (the function alone), and each binary's start alone (`nrl-k8s
// --version`, `nrl-krm --help`), beside the floor: a binary linking only
// the API types and YAML package every render needs (testdata/floor). Beside ns/op: cpu-s/op and minflt/op, the
// children's CPU time and minor page faults, which a loaded machine moves
// far less than the wall time (docs/performance.md, "Process start").
func BenchmarkFunctionProcess(b *testing.B) {
	in := resourceList(b, 1)
	cli, lean, floor := nrlK8s(b), nrlKRM(b), floorBinary(b)
	for _, c := range []struct {
		name  string
		bin   string
		args  []string
		stdin []byte
	}{
		{"render/nrl-k8s-fn", cli, []string{"fn"}, in},
		{"render/nrl-krm", lean, nil, in},
		{"start/nrl-k8s-version", cli, []string{"--version"}, nil},
		{"start/nrl-krm-help", lean, []string{"--help"}, nil},
		{"start/floor", floor, nil, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			var faults int64
			start := cpuNow()
			for b.Loop() {
				cmd := exec.Command(c.bin, c.args...)
				cmd.Dir = filepath.Dir(c.bin)
				cmd.Stdin = bytes.NewReader(c.stdin)
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil {
					b.Fatalf("%s %v: %v", c.bin, c.args, err)
				}
				if c.stdin != nil && !bytes.Contains(out.Bytes(), []byte("kind: RayJob")) {
					b.Fatalf("%s %v rendered no RayJob", c.bin, c.args)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					faults += ru.Minflt
				}
			}
			start.report(b)
			b.ReportMetric(float64(faults)/float64(b.N), "minflt/op")
		})
	}
}
