// Package hostile runs render-all and diff, as CI does on a pull request,
// over runs repositories built to attack the runner: every probe of the
// threat model in docs/reliability.md is one case. A PR controls every file,
// symlink and path of its repository; the host holds a secret file outside
// it and a secret in the environment. Each case asserts the command ends
// quickly, that neither secret ever reaches stdout or stderr, and that
// nothing outside the output directory changes.
package hostile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

func TestMain(m *testing.M) { clirun.Main(m) }

// The secrets a probe tries to print: a host file outside the repository
// and a variable in the runner's environment (CI's GITHUB_TOKEN).
const (
	fileSecret = "FILESECRET-7f3a9c"
	envSecret  = "ENVSECRET-2b8e1d"
	// valueSecret is a value inside the repository that resolver errors
	// must not echo.
	valueSecret = "VALUESECRETx91c4"
)

// A recipe and profile that render: the baseline every repository has.
const recipeYAML = `cluster:
  gpus_per_node: 4
  num_nodes: 2
policy:
  megatron_cfg: {enabled: false}
  dtensor_cfg: {enabled: true}
  optimizer: {kwargs: {foreach: false, fused: false}}
`

const profileYAML = `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: |
    python examples/run_grpo.py --config r.yaml
kuberay:
  training:
    name: ${user:}-c
    segmentSize: 2
    spec:
      headGroupSpec:
        template:
          spec:
            nodeSelector: {nodeGroup: cpu}
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 2
          template:
            metadata:
              annotations: {kai.scheduler/topology: t}
            spec:
              tolerations: [{operator: Exists}]
              resourceClaims: [{name: compute-domain-channel}]
              containers:
                - name: ray-worker
                  resources: {limits: {nvidia.com/gpu: "4"}}
`

func runYAML(name, extra string) string {
	return fmt.Sprintf(`apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: %s
spec:
  recipe: ../../configs/r.yaml
  profile: ../../configs/p.infra.yaml
  user: alice
%s`, name, extra)
}

// world is a temp dir holding host/ (the secret file) and repo/ (a git work
// tree: the PR's checkout, with the runs repository at its root).
type world struct {
	t          *testing.T
	dir, repo  string
	host       string
	secretFile string
	// untracked are repository files git must not track (written by an
	// earlier CI step, not by the pull request).
	untracked []string
	// stdin, when set, is the command's standard input (`nrl-k8s fn`).
	stdin string
	// env is added to the command's environment. The variables through
	// which CI names a pull request's base branch are otherwise removed,
	// so a test run inside a CI job judges what the test set up.
	env []string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	w := &world{t: t, dir: dir, repo: filepath.Join(dir, "repo"), host: filepath.Join(dir, "host")}
	w.secretFile = filepath.Join(w.host, "id_rsa")
	w.write(filepath.Join(w.host, "id_rsa"), "-----BEGIN KEY-----\n"+fileSecret+"\n")
	w.write(filepath.Join(w.host, "secret.yaml"), "token: "+fileSecret+"\n")
	w.write(filepath.Join(w.host, "keep", "a.yaml"), "kept: true\n")
	require.NoError(t, os.MkdirAll(w.repo, 0o755))
	w.git("init", "-q")
	w.file("configs/r.yaml", recipeYAML)
	w.file("configs/p.infra.yaml", profileYAML)
	w.file("runs/good/run.yaml", runYAML("good", ""))
	return w
}

func (w *world) write(p, content string) {
	w.t.Helper()
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(w.t, os.WriteFile(p, []byte(content), 0o644))
}

// file writes a file of the repository.
func (w *world) file(rel, content string) { w.write(filepath.Join(w.repo, rel), content) }

// untrackedFile writes a file git does not track.
func (w *world) untrackedFile(rel, content string) {
	w.file(rel, content)
	w.untracked = append(w.untracked, rel)
}

func (w *world) git(args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", w.repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "git %v: %s", args, out)
}

// track makes the checkout CI's: every file the pull request holds is
// tracked (staged is enough, git ls-files lists the index), the untracked
// ones are not.
// openPR renders the runs repository, commits it as main and checks out a
// pull request branch "pr" on top: the start of every gate test.
func (w *world) openPR(t *testing.T, message string) {
	t.Helper()
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", message)
	w.git("branch", "-M", "main")
	w.git("checkout", "-qb", "pr")
}

func (w *world) track() {
	w.t.Helper()
	w.git("add", "-A")
	for _, rel := range w.untracked {
		w.git("rm", "-q", "--cached", "--ignore-unmatch", "--", rel)
	}
}

// link makes a symlink in the repository.
func (w *world) link(rel, target string) {
	w.t.Helper()
	p := filepath.Join(w.repo, rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(w.t, os.Symlink(target, p))
}

// snapshot hashes every entry under dir except the output directory (a
// symlink is its target text: it is never followed).
func (w *world) snapshot() map[string]string {
	w.t.Helper()
	w.track()
	out := map[string]string{}
	manifests := filepath.Join(w.repo, "manifests")
	require.NoError(w.t, filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == manifests || p == filepath.Join(w.repo, ".git") {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "link:" + target
			return err
		case d.IsDir():
			out[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
			return err
		}
		return nil
	}))
	return out
}

type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
	// maxRSS is the process's peak resident memory in bytes.
	maxRSS int64
}

// MaxRSS is the memory every probe must stay under (a hostile
// repository must not take the runner's memory).
const MaxRSS = 1 << 30

// run runs the CLI with the secret in its environment and stdin left open
// (a probe reading /dev/stdin must not wait for it).
func (w *world) run(args ...string) result {
	w.t.Helper()
	w.track()
	bin := clirun.Binary(w.t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = w.repo
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(renderall.BaseEnv, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GITHUB_TOKEN="+envSecret, "NRL_K8S_USER=alice")
	cmd.Env = append(cmd.Env, w.env...)
	pr, pw, err := os.Pipe()
	require.NoError(w.t, err)
	defer func() { _, _ = pr.Close(), pw.Close() }()
	cmd.Stdin = pr
	if w.stdin != "" {
		cmd.Stdin = strings.NewReader(w.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	require.NoError(w.t, ctx.Err(), "%v timed out\nstderr: %s", args, stderr.String())
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(w.t, err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	require.Less(w.t, rss, int64(MaxRSS), "%v peaked at %d MB", args, rss>>20)
	return result{code, stdout.String(), stderr.String(), took, rss}
}

// clean asserts no secret reached the output.
func clean(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{fileSecret, envSecret, valueSecret} {
		require.NotContains(t, r.stdout, s, "stdout leaks a secret")
		require.NotContains(t, r.stderr, s, "stderr leaks a secret")
	}
}

// stoppedRun is a run file's spec line declaring the run stopped.
const stoppedRun = "  state: stopped\n"
