package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// gateRuns is the size of the runs repository the PR gate is measured on.
const gateRuns = 600

var (
	gateOnce sync.Once
	gateDir  string
	gateErr  error
)

// gateRepo is a git repository of gateRuns qwen runs with their manifests
// committed on main, checked out on a branch pr that changes every run's
// manifest; made once per process.
func gateRepo(b *testing.B) string {
	gateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nrl-prgate-bench-")
		if err != nil {
			gateErr = err
			return
		}
		gateDir = dir
		copyQwenInputs(b, dir)
		for i := range gateRuns {
			name := fmt.Sprintf("run-%03d", i)
			if err := os.MkdirAll(filepath.Join(dir, "runs", name), 0o755); err != nil {
				gateErr = err
				return
			}
			writeFile(b, filepath.Join(dir, "runs", name), "run.yaml", fmt.Sprintf(`apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: %s
  namespace: rl-team
spec:
  recipe: ../../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml
  profile: ../../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml
  user: alice
`, name))
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}} {
			if gateErr = gitRun(dir, args...); gateErr != nil {
				return
			}
		}
		if _, gateErr = renderall.Run(gateOptions(dir, false)); gateErr != nil {
			return
		}
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "runs"}, {"checkout", "-qb", "pr"}} {
			if gateErr = gitRun(dir, args...); gateErr != nil {
				return
			}
		}
		// The pull request bumps the image of every run: the gate's worst
		// case, every manifest differs from the base's.
		profile := filepath.Join(dir, "profiles", "gb300", "qwen3_30b_math_4n_4gpu.gb300.infra.yaml")
		data, err := os.ReadFile(profile)
		if err != nil {
			gateErr = err
			return
		}
		writeFile(b, filepath.Dir(profile), filepath.Base(profile), strings.Replace(string(data), "nemo-rl:664d29c-49528955", "nemo-rl:664d29c-49600000", 1))
		if _, gateErr = renderall.Run(gateOptions(dir, false)); gateErr != nil {
			return
		}
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "image bump"}} {
			if gateErr = gitRun(dir, args...); gateErr != nil {
				return
			}
		}
	})
	if gateErr != nil {
		b.Fatal(gateErr)
	}
	return gateDir
}

func gitRun(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %w: %s", args, err, out)
	}
	return nil
}

func gateOptions(dir string, check bool) renderall.Options {
	disk, err := source.ConfineRepo(dir, false)
	if err != nil {
		panic(err)
	}
	return renderall.Options{
		Disk: disk, Dir: dir, Out: filepath.Join(dir, renderall.ManifestsDir), DefaultOut: true,
		Check: check, Base: renderall.BaseSpec{Ref: "main"}, Rerun: "nrl-k8s render-all .",
		Gate: review.SecurityGate, Stdout: io.Discard, Stderr: io.Discard,
	}
}

// BenchmarkPRGate compares, on a pull request that changes all 600 runs of
// a repository: render-all (every run rendered, the tree compared, nothing
// to write), the security gate alone (the base branch's manifests and
// allow-list read from git, every run parsed on both sides and judged), and
// render-all --check, which is both. The gate reads the base with a fixed
// number of git processes, never one per manifest (docs/performance.md).
func BenchmarkPRGate(b *testing.B) {
	dir := gateRepo(b)
	opts := gateOptions(dir, false)
	runs, err := renderall.Discover(opts.Disk, dir)
	if err != nil {
		b.Fatal(err)
	}
	res := renderall.Render(opts.Disk, runs)
	if len(res.Files) != gateRuns {
		b.Fatalf("%d of %d runs rendered: %v", len(res.Files), gateRuns, res.Diags)
	}
	b.Run("render-all", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuNow()
		for b.Loop() {
			if failed, err := renderall.Run(opts); err != nil || failed {
				b.Fatal(failed, err)
			}
		}
		cpu.report(b)
	})
	// gate: every run differs from the base; gate-unchanged: none does (the
	// base is the pull request's own commit), what is left is reading it.
	for _, c := range []struct{ name, ref string }{{"gate", "main"}, {"gate-unchanged", "pr"}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				base, err := renderall.BaseFromRevision(dir, c.ref, "")
				if err != nil {
					b.Fatal(err)
				}
				if failed, err := review.SecurityGate(io.Discard, res, base, nil); err != nil || failed {
					b.Fatal(failed, err)
				}
			}
			cpu.report(b)
		})
	}
	b.Run("render-all-check", func(b *testing.B) {
		b.ReportAllocs()
		check := gateOptions(dir, true)
		cpu := cpuNow()
		for b.Loop() {
			if failed, err := renderall.Run(check); err != nil || failed {
				b.Fatal(failed, err)
			}
		}
		cpu.report(b)
	})
}
