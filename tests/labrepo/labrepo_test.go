// Package labrepo walks a lab's runs repository end to end, as
// docs/review-workflow.md ("A lab's runs repository, step by step") tells
// it: NeMo-RL pinned as a git submodule, an H100 cluster profile shared by
// an SFT and a DPO profile through `defaults:`, runs/<run>/run.yaml files
// whose paths are relative to themselves, render-all keeping manifests/ and
// its kustomization, a kustomize overlay over it, the same run files
// through the KRM function, and the PR gate against the base branch.
// Everything runs through the built CLI and the pinned kustomize.
package labrepo_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) { clirun.Main(m) }

const (
	sftRecipe = "nemo-rl/examples/configs/recipes/llm/sft-llama3.2-1b-2n8g-hsdp.yaml"
	dpoRecipe = "nemo-rl/examples/configs/recipes/llm/dpo-llama3.2-1b-instruct-1n8g-fsdp2tp1.v2.yaml"
)

func TestLabRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git, the CLI and kustomize")
	}
	kustomize := testenv.Tool(t, "NRL_KUSTOMIZE")
	root := testenv.RepoRoot(t)
	dir := t.TempDir()

	// NeMo-RL as the lab pins it: a git repository of its own (here the
	// repository's copy of NeMo-RL's examples/), added as a submodule.
	upstream := filepath.Join(dir, "nemo-rl-upstream")
	require.NoError(t, os.CopyFS(filepath.Join(upstream, "examples"), os.DirFS(filepath.Join(root, "recipes/examples"))))
	git(t, upstream, "init", "-q", "-b", "main")
	git(t, upstream, "add", "-A")
	git(t, upstream, "commit", "-qm", "NeMo-RL")

	lab := filepath.Join(dir, "lab")
	require.NoError(t, os.Mkdir(lab, 0o755))
	git(t, lab, "init", "-q", "-b", "main")
	git(t, lab, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../nemo-rl-upstream", "nemo-rl")
	writeLab(t, root, lab)
	out, _ := cli(t, lab, 0, "kustomize-config", "configuration")
	write(t, lab, "overlays/prod/nrl-k8s.configuration.yaml", out)
	git(t, lab, "add", "-A")

	// render-all: both runs render, manifests/kustomization.yaml lists them.
	out, errOut := cli(t, lab, 0, "render-all", "--kustomization", ".")
	require.Contains(t, out, "wrote manifests/kustomization.yaml")
	require.Contains(t, out, "2 run(s): 2 rendered, 2 changed, 0 failed")
	require.NotContains(t, errOut, "error")
	sft := testenv.ReadFile(t, filepath.Join(lab, "manifests/sft-llama1b.yaml"))
	// The recipe root is the submodule (the folder holding examples/configs/):
	// --config is the checked recipe's path in the image's checkout, and
	// ${run.name} in the shared profile names the run's own directories.
	require.Contains(t, sft, "--config examples/configs/recipes/llm/sft-llama3.2-1b-2n8g-hsdp.yaml")
	require.Contains(t, sft, "checkpointing.checkpoint_dir=/mnt/nfs/checkpoints/sft-llama1b")
	require.Contains(t, testenv.ReadFile(t, filepath.Join(lab, "manifests/dpo-llama1b.yaml")), "python -u examples/run_dpo.py")
	require.Equal(t, "# Written by nrl-k8s render-all --kustomization: every run's manifest, so an\n"+
		"# overlay naming this directory as a resource takes every run. Not edited by\n# hand: render-all rewrites it.\n"+
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- dpo-llama1b.yaml\n- sft-llama1b.yaml\n",
		testenv.ReadFile(t, filepath.Join(lab, "manifests/kustomization.yaml")))
	git(t, lab, "add", "-A")

	// --recipe-root names the same root; a folder that does not hold the
	// recipe is refused by name.
	cli(t, lab, 0, "render-all", "--kustomization", "--recipe-root", "nemo-rl", "--check", "--base", ".", ".")
	_, errOut = cli(t, lab, 1, "render-all", "--recipe-root", "profiles", ".")
	require.Contains(t, errOut, "is not under the recipe root profiles (--recipe-root)")

	// The overlay takes every run into its namespace.
	overlay := run(t, lab, 0, kustomize, "build", "overlays/prod")
	require.Equal(t, 2, strings.Count(overlay, "kind: RayJob"), overlay)
	require.Equal(t, 2, strings.Count(overlay, "namespace: lab-prod"), overlay)
	require.NotContains(t, overlay, "namespace: lab\n")

	// The same run files through the KRM function: kustomize-inputs reads
	// them relative to themselves, and kustomize's output is render-all's.
	cli(t, lab, 0, "kustomize-inputs", "-k", ".", "--write", "runs/sft-llama1b/run.yaml", "runs/dpo-llama1b/run.yaml")
	require.Contains(t, testenv.ReadFile(t, filepath.Join(lab, "kustomization.yaml")), "  - sft-llama1b=runs/sft-llama1b/run.yaml\n")
	git(t, lab, "add", "-A")
	cli(t, lab, 0, "kustomize-inputs", "-k", ".", "--check", "runs/sft-llama1b/run.yaml", "runs/dpo-llama1b/run.yaml")
	krm := run(t, lab, 0, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.Equal(t, sft+testenv.ReadFile(t, filepath.Join(lab, "manifests/dpo-llama1b.yaml")), "---\n"+krm)
	git(t, lab, "commit", "-qm", "two runs")

	// A pull request adding a run the allow-list permits passes the gate.
	git(t, lab, "checkout", "-qb", "more-steps")
	write(t, lab, "runs/sft-fast/run.yaml", runFile("sft-fast", sftRecipe, "sft", "carol", "  overrides:\n  - sft.max_num_steps=100\n"))
	git(t, lab, "add", "-A")
	_, errOut = cli(t, lab, 1, "render-all", "--kustomization", "--check", "--base-ref", "main", ".")
	require.Contains(t, errOut, "manifests/sft-fast.yaml: missing")
	require.Contains(t, errOut, "run `nrl-k8s render-all . --kustomization`")
	cli(t, lab, 0, "render-all", "--kustomization", ".")
	git(t, lab, "add", "-A")
	git(t, lab, "commit", "-qm", "sft-fast")
	_, errOut = cli(t, lab, 0, "render-all", "--kustomization", "--check", "--base-ref", "main", ".")
	require.Contains(t, errOut, "security gate: judged against main")
	require.NotContains(t, errOut, "refused")

	// One that adds a privilege the base branch's allow-list does not
	// permit fails it, with the reason.
	write(t, lab, "runs/sft-fast/run.yaml", runFile("sft-fast", sftRecipe, "sft", "carol",
		"  overrides:\n  - sft.max_num_steps=100\n  - infra.kuberay.training.spec.workerGroupSpecs.0.template.spec.hostNetwork=true\n"))
	git(t, lab, "add", "-A")
	cli(t, lab, 0, "render-all", "--kustomization", ".")
	git(t, lab, "add", "-A")
	git(t, lab, "commit", "-qm", "faster")
	_, errOut = cli(t, lab, 1, "render-all", "--kustomization", "--check", "--base-ref", "main", ".")
	require.Contains(t, errOut, "sft-fast: refused: the run gains 1 privilege(s): hostNetwork")

	summaryWithSubmodule(t, dir, lab)

	// A clone whose submodule is not checked out says so, with the command.
	clone := filepath.Join(dir, "clone")
	git(t, dir, "clone", "-q", lab, clone)
	_, errOut = cli(t, clone, 1, "render-all", "--kustomization", "--check", "--base-ref", "origin/main", ".")
	require.Contains(t, errOut, "it is in the git submodule nemo-rl, which is not checked out: expected `git submodule update --init nemo-rl` first")

	labFlux(t, lab, kustomize)
}

// labFlux turns Flux generation on (docs/gitops.md, "Flux, kustomize") on
// a branch of main: each run's folder builds, with kustomize-controller's
// lack of load restrictions, exactly its manifest; a run file deleted
// outright is refused by the gate; the two-step removal passes.
func labFlux(t *testing.T, lab, kustomize string) {
	t.Helper()
	git(t, lab, "checkout", "-qb", "flux", "main")
	out, _ := cli(t, lab, 0, "render-all", "--kustomization", "--flux", "lab-runs", ".")
	require.Contains(t, out, "wrote flux-runs/sft-llama1b.yaml\n")
	require.Contains(t, testenv.ReadFile(t, filepath.Join(lab, "flux-runs/sft-llama1b.yaml")), "  sourceRef: {kind: GitRepository, name: lab-runs}\n  path: ./flux/sft-llama1b\n")
	build := run(t, lab, 0, kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", "flux/sft-llama1b")
	require.Equal(t, testenv.ReadFile(t, filepath.Join(lab, "manifests/sft-llama1b.yaml")), "---\n"+build)
	// Without lifting the restriction, kustomize refuses ../../manifests.
	run(t, lab, 1, kustomize, "build", "flux/sft-llama1b")
	git(t, lab, "add", "-A")
	git(t, lab, "commit", "-qm", "Flux")

	require.NoError(t, os.RemoveAll(filepath.Join(lab, "runs/dpo-llama1b")))
	git(t, lab, "add", "-A")
	_, errOut := cli(t, lab, 1, "render-all", "--kustomization", "--flux", "lab-runs", "--check", "--base-ref", "HEAD", ".")
	require.Contains(t, errOut, "dpo-llama1b: refused: runs/dpo-llama1b/run.yaml is deleted, but on the base branch the run is not state: removed")

	write(t, lab, "runs/dpo-llama1b/run.yaml", runFile("dpo-llama1b", dpoRecipe, "dpo", "bob", "  overrides:\n  - cluster.num_nodes=2\n  state: removed\n"))
	git(t, lab, "add", "-A")
	out, _ = cli(t, lab, 0, "render-all", "--kustomization", "--flux", "lab-runs", ".")
	require.Contains(t, out, "removed manifests/dpo-llama1b.yaml (the run is state: removed)\n")
	require.Empty(t, run(t, lab, 0, kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", "flux/dpo-llama1b"), "a removed run builds nothing")
	git(t, lab, "add", "-A")
	git(t, lab, "commit", "-qm", "dpo-llama1b removed")
	require.NoError(t, os.RemoveAll(filepath.Join(lab, "runs/dpo-llama1b")))
	cli(t, lab, 0, "render-all", "--kustomization", "--flux", "lab-runs", ".")
	git(t, lab, "add", "-A")
	_, errOut = cli(t, lab, 0, "render-all", "--kustomization", "--flux", "lab-runs", "--check", "--base-ref", "HEAD", ".")
	require.NotContains(t, errOut, "refused")
}

// summaryWithSubmodule runs the review summary step as
// docs/review-workflow.md gives it: the base branch in a worktree, whose
// submodule git does not check out; the documented submodule step makes
// its recipes readable.
func summaryWithSubmodule(t *testing.T, dir, lab string) {
	t.Helper()
	base := filepath.Join(dir, "base")
	git(t, lab, "worktree", "add", "-q", base, "main")
	_, errOut := cli(t, lab, 1, "diff", base, ".")
	require.Contains(t, errOut, "git submodule update --init nemo-rl")
	git(t, base, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
	out, errOut := cli(t, lab, 0, "diff", base, ".")
	require.NotContains(t, errOut, "not checked out")
	require.Contains(t, out, "sft-fast", "the summary names the pull request's new run")
}

// writeLab writes the lab's own files: the cluster profile (the shipped
// H100 NFS profile, its launch section dropped and its cluster named after
// the run), the two driver profiles layered on it, two runs, the
// allow-list, the overlay and the KRM function's kustomization.
func writeLab(t *testing.T, root, lab string) {
	t.Helper()
	h100 := testenv.ReadFile(t, filepath.Join(root, "profiles/h100/grpo-nano-v2-12b-2n8g.h100-nfs.infra.yaml"))
	cluster := h100[strings.Index(h100, "_shared:"):]
	cluster = cluster[:strings.Index(cluster, "launch:")] + cluster[strings.Index(cluster, "kuberay:"):]
	cluster = strings.Replace(cluster, "name: ${user:}-h100-2n8g", "name: ${run.name}", 1)
	write(t, lab, "profiles/cluster.infra.yaml", "# The lab's cluster: 2 H100 nodes x 8 GPUs, NFS claim nemo-rl-nfs.\n"+cluster)
	for _, d := range []string{"sft", "dpo"} {
		write(t, lab, "profiles/"+d+".infra.yaml", `defaults: cluster.infra.yaml
launch:
  runMode: batch
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: |
    cd /opt/nemo-rl
    python -u examples/run_`+d+`.py --config examples/configs/`+d+`.yaml \
      checkpointing.checkpoint_dir=/mnt/nfs/checkpoints/${run.name} \
      logger.log_dir=/mnt/nfs/logs/${run.name}
`)
	}
	write(t, lab, "runs/sft-llama1b/run.yaml", runFile("sft-llama1b", sftRecipe, "sft", "alice", ""))
	write(t, lab, "runs/dpo-llama1b/run.yaml", runFile("dpo-llama1b", dpoRecipe, "dpo", "bob", "  overrides:\n  - cluster.num_nodes=2\n"))
	write(t, lab, "review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\ndefault:\n  namespaces: [lab]\n  podSecurity: baseline\n")
	write(t, lab, "overlays/prod/kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../manifests
namespace: lab-prod
configurations:
- nrl-k8s.configuration.yaml
`)
	write(t, lab, "function.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: nrl-k8s
  annotations:
    config.kubernetes.io/local-config: "true"
    config.kubernetes.io/function: |
      exec:
        path: `+clirun.Binary(t)+`
        args: [fn]
`)
	write(t, lab, "kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- runs/sft-llama1b/run.yaml
- runs/dpo-llama1b/run.yaml
# BEGIN nrl-k8s kustomize-inputs: generated, do not edit (nrl-k8s kustomize-inputs --write)
# END nrl-k8s kustomize-inputs
transformers:
- function.yaml
sortOptions:
  order: fifo
`)
}

// runFile is a NemoRLRun whose paths are relative to runs/<name>/run.yaml.
func runFile(name, recipe, driver, user, extra string) string {
	return `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: ` + name + `
  namespace: lab
spec:
  recipe: ../../` + recipe + `
  profile: ../../profiles/` + driver + `.infra.yaml
  user: ` + user + "\n" + extra
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// cli runs the built nrl-k8s in dir and requires its exit code.
func cli(t *testing.T, dir string, code int, args ...string) (string, string) {
	t.Helper()
	return runCode(t, dir, code, clirun.Binary(t), args...)
}

// run runs a program in dir, requires its exit code and returns stdout.
func run(t *testing.T, dir string, code int, prog string, args ...string) string {
	t.Helper()
	out, _ := runCode(t, dir, code, prog, args...)
	return out
}

func runCode(t *testing.T, dir string, code int, prog string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	// CI names no base branch here: the tests say --base-ref.
	cmd.Env = append(os.Environ(), "GITHUB_BASE_REF=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	got := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		got = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.Equal(t, code, got, "%s %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(prog), strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String(), stderr.String()
}

// git runs git in dir as a fixed author, with no user or system config.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=lab", "GIT_AUTHOR_EMAIL=lab@example.com", "GIT_COMMITTER_NAME=lab", "GIT_COMMITTER_EMAIL=lab@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s in %s:\n%s", strings.Join(args, " "), dir, out)
}
