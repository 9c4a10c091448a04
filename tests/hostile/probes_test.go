package hostile

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// probe is one attack: setup plants it in a fresh world; the command (by
// default `render-all --check`, then `render-all`) must fail (exit 1) with
// want in stderr, leak nothing and change nothing outside manifests/.
type probe struct {
	name  string
	setup func(w *world)
	args  []string
	want  string
	// leak lists more strings that must never be printed (a token the
	// probe plants, when the shared markers cannot be part of it).
	leak []string
}

func withWorkerEnv(env string) string {
	return strings.Replace(profileYAML, "                - name: ray-worker\n",
		"                - name: ray-worker\n                  env: "+env+"\n", 1)
}

// run adds a run named name with spec lines extra (the recipe and profile
// are the baseline ones unless extra names others after them: a later key
// is refused, so the helper writes the spec in full).
func customRun(name, recipe, profile, extra string) string {
	return fmt.Sprintf(`apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: %s
spec:
  recipe: %s
  profile: %s
  user: alice
%s`, name, recipe, profile, extra)
}

// probes is every attack TestProbes plants, one group after another.
func probes() []probe {
	ps := append(outputProbes(), inputFileProbes()...)
	ps = append(ps, runProbes()...)
	return append(ps, secretProbes()...)
}

// outputProbes: symlinks where render-all and diff read manifests or write
// them.
func outputProbes() []probe {
	return []probe{
		{name: "manifest symlink to a host file",
			setup: func(w *world) { w.link("manifests/leak.yaml", w.secretFile) },
			want:  "manifests/leak.yaml: is a symlink; refused"},
		{name: "manifest symlink to the process environment",
			setup: func(w *world) { w.link("manifests/env.yaml", "/proc/self/environ") },
			want:  "manifests/env.yaml: is a symlink; refused"},
		{name: "diff of a tree with a symlink",
			setup: func(w *world) {
				w.file("old/good.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
				w.link("new/good.yaml", w.secretFile)
			},
			args: []string{"diff", "old", "new"},
			want: "new/good.yaml: is a symlink; refused"},
		{name: "diff of a symlinked file",
			setup: func(w *world) {
				w.file("old.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
				w.link("new.yaml", "/proc/self/environ")
			},
			args: []string{"diff", "old.yaml", "new.yaml"},
			want: "new.yaml: is a symlink; refused"},
		{name: "output directory is a symlink out of the repository",
			setup: func(w *world) { w.link("manifests", filepath.Join(w.host, "keep")) },
			want:  "manifests: is a symlink; refused"},
	}
}

// inputFileProbes: recipe, profile and defaults files outside the root,
// devices, symlinks and sizes over the limits.
func inputFileProbes() []probe {
	return []probe{
		{name: "defaults escapes with ..",
			setup: func(w *world) {
				w.file("configs/esc.yaml", "defaults: ../../host/secret.yaml\n"+recipeYAML)
				w.file("runs/esc/run.yaml", customRun("esc", "../../configs/esc.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "configs/esc.yaml: defaults: base file"},
		{name: "defaults is an absolute host path",
			setup: func(w *world) {
				w.file("configs/abs.yaml", "defaults: ["+filepath.Join(w.host, "secret.yaml")+"]\n"+recipeYAML)
				w.file("runs/abs/run.yaml", customRun("abs", "../../configs/abs.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "configs/abs.yaml: defaults[0]: base file"},
		{name: "profile defaults chain reads /dev/urandom",
			setup: func(w *world) {
				w.file("configs/dev.infra.yaml", "defaults: /dev/urandom\n"+profileYAML)
				w.file("runs/dev/run.yaml", customRun("dev", "../../configs/r.yaml", "../../configs/dev.infra.yaml", ""))
			},
			want: "configs/dev.infra.yaml: defaults: base file /dev/urandom"},
		{name: "recipe is /dev/zero",
			setup: func(w *world) {
				w.file("runs/zero/run.yaml", customRun("zero", "/dev/zero", "../../configs/p.infra.yaml", ""))
			},
			want: "runs/zero/run.yaml: spec.recipe: /dev/zero: not a file inside the root; refused"},
		{name: "profile is /dev/stdin",
			setup: func(w *world) {
				w.file("runs/stdin/run.yaml", customRun("stdin", "../../configs/r.yaml", "/dev/stdin", ""))
			},
			want: "runs/stdin/run.yaml: spec.profile: /dev/stdin: not a file inside the root; refused"},
		{name: "user defaults is a host file",
			setup: func(w *world) {
				w.file("runs/ud/run.yaml", customRun("ud", "../../configs/r.yaml", "../../configs/p.infra.yaml", "  defaults: "+w.secretFile+"\n"))
			},
			want: "runs/ud/run.yaml: spec.defaults: "},
		{name: "symlink in the repository to a host file",
			setup: func(w *world) {
				w.link("configs/s.yaml", w.secretFile)
				w.file("runs/sl/run.yaml", customRun("sl", "../../configs/s.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "runs/sl/run.yaml: spec.recipe: configs/s.yaml: not a file inside the root; refused"},
		{name: "symlink in the repository to a device",
			setup: func(w *world) {
				w.link("configs/z.yaml", "/dev/zero")
				w.file("runs/sz/run.yaml", customRun("sz", "../../configs/z.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "runs/sz/run.yaml: spec.recipe: configs/z.yaml: not a file inside the root; refused"},
		{name: "run file is a symlink to the environment",
			setup: func(w *world) { w.link("runs/envrun/run.yaml", "/proc/self/environ") },
			want:  "runs/envrun/run.yaml: not a file inside the root"},
		{name: "run directory is a symlink",
			setup: func(w *world) { w.link("runs/linked", filepath.Join(w.host, "keep")) },
			want:  "runs/linked: is a symlink"},
		{name: "file over the size limit",
			setup: func(w *world) {
				w.file("configs/big.yaml", recipeYAML+strings.Repeat("# padding padding padding padding\n", 5<<20/34))
				w.file("runs/big/run.yaml", customRun("big", "../../configs/big.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "configs/big.yaml: over the 1048576-byte limit"},
		{name: "a chain of files each under the limit, over the run's budget",
			setup: func(w *world) {
				pad := strings.Repeat("# padding padding padding padding\n", 900<<10/34)
				w.file("configs/c0.yaml", recipeYAML+pad)
				for i := 1; i < 6; i++ {
					w.file(fmt.Sprintf("configs/c%d.yaml", i), fmt.Sprintf("defaults: c%d.yaml\n", i-1)+pad)
				}
				w.file("runs/chain/run.yaml", customRun("chain", "../../configs/c5.yaml", "../../configs/p.infra.yaml", ""))
			},
			want: "the run's input files add up to more than 4194304 bytes"},
	}
}

// runProbes: NemoRLRuns that collide, take a reserved or invalid name, or
// read the environment.
func runProbes() []probe {
	return []probe{
		{name: "duplicate key in a NemoRLRun",
			setup: func(w *world) {
				w.file("runs/dup/run.yaml", customRun("dup", "../../configs/r.yaml", "../../configs/p.infra.yaml", "  mode: raycluster\n  mode: dev\n"))
			},
			want: `key "mode" already set`},
		{name: "two runs render the same objects",
			// spec.name names the objects: twin takes good's, with another run id.
			setup: func(w *world) { w.file("runs/twin/run.yaml", runYAML("twin", "  name: good\n  runId: r2\n")) },
			want:  "is also rendered by run good, differently"},
		{name: "reserved run name",
			setup: func(w *world) { w.file("runs/inputs/run.yaml", runYAML("inputs", "  namespace: other\n")) },
			want:  `"inputs" is reserved`},
		{name: "run name that is not an object name",
			setup: func(w *world) { w.file("runs/Bad Name!/run.yaml", runYAML("Bad Name!", "  namespace: other\n")) },
			want:  "a lowercase RFC 1123 subdomain"},
		{name: "raycluster launch.env from the environment",
			setup: func(w *world) {
				w.file("configs/hostenv.infra.yaml", strings.Replace(profileYAML, "launch:\n", "launch:\n  env: {GITHUB_TOKEN: '${oc.env:GITHUB_TOKEN}'}\n", 1))
				w.file("runs/hostenv/run.yaml", customRun("hostenv", "../../configs/r.yaml", "../../configs/hostenv.infra.yaml", "  mode: raycluster\n  namespace: other\n  env: {GITHUB_TOKEN: "+envSecret+"}\n"))
			},
			want: "launch.env.GITHUB_TOKEN: line 3: is taken from ${oc.env:...}"},
	}
}

// secretProbes: credentials a profile holds in a value, a label, an
// annotation or the entrypoint, and resolver errors that would echo one.
func secretProbes() []probe {
	akia := "AKIA" + strings.ToUpper(valueSecret)
	ps := []probe{
		{name: "AWS key under a harmless name",
			setup: func(w *world) { secretProfile(w, withWorkerEnv("[{name: NOTE, value: "+akia+"}]")) },
			want:  "looks like an AWS access key id",
			leak:  []string{akia}},
		{name: "credential in a label",
			setup: func(w *world) {
				secretProfile(w, strings.Replace(profileYAML, "image: img:1\n", "image: img:1\nlabels: {db-password: "+valueSecret+"}\n", 1))
			},
			want: "metadata.labels.db-password: a credential-looking label key"},
		{name: "credential in an annotation",
			setup: func(w *world) {
				secretProfile(w, strings.Replace(profileYAML, "annotations: {kai.scheduler/topology: t}", "annotations: {kai.scheduler/topology: t, hf-token: "+valueSecret+"}", 1))
			},
			want: "annotations.hf-token: a credential-looking annotation key"},
		{name: "export of a token in the entrypoint",
			setup: func(w *world) {
				secretProfile(w, strings.Replace(profileYAML, "  entrypoint: |\n", "  entrypoint: |\n    export HF_TOKEN="+valueSecret+"\n", 1))
			},
			want: "exports HF_TOKEN with a literal value"},
		{name: "database URL with a password",
			setup: func(w *world) {
				secretProfile(w, withWorkerEnv("[{name: DATABASE_URL, value: 'postgres://admin:"+valueSecret+"@db:5432/x'}]"))
			},
			want: "looks like a URL with a password"},
	}
	for _, n := range []string{"GITHUB_PAT", "WANDB_KEY", "NGC_KEY", "DB_PASS", "HF_AUTH", "SSH_KEY"} {
		ps = append(ps, probe{name: "literal " + n,
			setup: func(w *world) { secretProfile(w, withWorkerEnv("[{name: "+n+", value: "+valueSecret+"}]")) },
			want:  "(" + n + "): holds a literal value under a credential-looking name"})
	}
	for _, v := range []struct{ kind, value string }{
		{"a GitHub token", "ghp_" + valueSecret + "abcdefgh"},
		{"a Hugging Face token", "hf_" + valueSecret + "abcdefgh"},
		{"an NVIDIA API key", "nvapi-" + valueSecret + "abcdefgh"},
	} {
		ps = append(ps, probe{name: v.kind + " under any name",
			setup: func(w *world) { secretProfile(w, withWorkerEnv("[{name: NOTE, value: "+v.value+"}]")) },
			want:  "looks like " + v.kind})
	}
	for _, v := range []struct{ name, expr string }{
		{"env name from a value", "${oc.env:${launch.codePath}}"},
		{"arithmetic on a value", "${add:${launch.codePath},1}"},
		{"key from a value", "${${launch.codePath}}"},
	} {
		ps = append(ps, probe{name: "resolver error: " + v.name,
			setup: func(w *world) {
				p := strings.Replace(profileYAML, "codePath: /opt/nemo-rl", "codePath: /opt/"+valueSecret, 1)
				secretProfile(w, strings.Replace(p, "image: img:1", "image: '"+v.expr+"'", 1))
			},
			want: "image: cannot resolve"})
	}
	return ps
}

// secretProfile adds a run `leaky` over the profile text given.
func secretProfile(w *world, profile string) {
	w.file("configs/leaky.infra.yaml", profile)
	w.file("runs/leaky/run.yaml", customRun("leaky", "../../configs/r.yaml", "../../configs/leaky.infra.yaml", "  namespace: other\n"))
}

func TestProbes(t *testing.T) {
	for _, p := range probes() {
		t.Run(p.name, func(t *testing.T) {
			expectRefused(t, p, [][]string{{"render-all", ".", "--check"}, {"render-all", "."}})
		})
	}
}

// expectRefused plants the probe in a new world and runs its command, or
// each of defaults when it names none: every one exits 1 with the probe's
// message, quickly, leaks nothing and writes nothing outside manifests/.
func expectRefused(t *testing.T, p probe, defaults [][]string) {
	t.Helper()
	w := newWorld(t)
	p.setup(w)
	before := w.snapshot()
	cmds := [][]string{p.args}
	if p.args == nil {
		cmds = defaults
	}
	for _, args := range cmds {
		r := w.run(args...)
		clean(t, r)
		for _, s := range p.leak {
			require.NotContains(t, r.stdout+r.stderr, s)
		}
		require.Equal(t, 1, r.code, "%v\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
		require.Contains(t, r.stderr, p.want, "%v", args)
		require.Less(t, r.took, 10*time.Second, "%v", args)
		require.Equal(t, before, w.snapshot(), "%v changed something outside manifests/", args)
	}
}

// The baseline renders: a probe fails because of what it planted.
func TestBaseline(t *testing.T) {
	w := newWorld(t)
	r := w.run("render-all", ".")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "wrote manifests/good.yaml")
	r = w.run("render-all", ".", "--check")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
}

// Every probe in one repository, as one pull request: render-all finishes
// in seconds, prints no secret, touches nothing outside manifests/, and
// still renders the good run.
func TestAllProbesAtOnce(t *testing.T) {
	w := newWorld(t)
	for _, p := range probes() {
		if p.args != nil || strings.HasPrefix(p.name, "output directory") {
			continue // diff cases, and the one that refuses the whole output
		}
		// Probes that share the run `leaky` overwrite each other's
		// profile; each is covered alone by TestProbes.
		p.setup(w)
	}
	// An exponential defaults diamond, 41 files deep.
	w.file("configs/d0.yaml", recipeYAML)
	for i := 1; i <= 40; i++ {
		w.file(fmt.Sprintf("configs/d%d.yaml", i), fmt.Sprintf("defaults: [d%d.yaml, d%d.yaml]\n", i-1, i-1))
	}
	w.file("configs/diamond.infra.yaml", strings.Replace(profileYAML, "--config r.yaml", "--config d40.yaml", 1))
	w.file("runs/diamond/run.yaml", customRun("diamond", "../../configs/d40.yaml", "../../configs/diamond.infra.yaml", "  namespace: diamond\n"))
	before := w.snapshot()
	for _, args := range [][]string{{"render-all", ".", "--check"}, {"render-all", "."}} {
		r := w.run(args...)
		t.Logf("%v: exit %d in %v", args, r.code, r.took)
		clean(t, r)
		require.Equal(t, 1, r.code)
		require.Less(t, r.took, 10*time.Second, "%v", args)
		require.Equal(t, before, w.snapshot(), "%v changed something outside manifests/", args)
		require.NotContains(t, r.stderr, "diamond: error", "the diamond renders")
		for _, want := range []string{"manifests/leak.yaml: is a symlink; refused", "is also rendered by run good", `key "mode" already set`, "over the 1048576-byte limit"} {
			require.Contains(t, r.stderr, want, "%v", args)
		}
	}
	require.FileExists(t, filepath.Join(w.repo, "manifests", "good.yaml"))
	require.FileExists(t, filepath.Join(w.repo, "manifests", "diamond.yaml"))
}

// `recipe: /etc/passwd` and a path that exists nowhere read the same: the
// error is no oracle for which host files exist.
func TestNoExistenceOracle(t *testing.T) {
	stderr := func(path, shown string) string {
		w := newWorld(t)
		w.file("runs/probe/run.yaml", customRun("probe", path, "../../configs/p.infra.yaml", "  namespace: other\n"))
		r := w.run("render-all", ".", "--check")
		require.Equal(t, 1, r.code)
		return strings.ReplaceAll(r.stderr, shown, "PATH")
	}
	exists := stderr("/etc/passwd", "/etc/passwd")
	require.Contains(t, exists, "spec.recipe: PATH: not a file inside the root; refused")
	require.Equal(t, exists, stderr("/etc/no-such-file-here", "/etc/no-such-file-here"))
	require.Equal(t, exists, stderr("../../../host/id_rsa", "../host/id_rsa"))
	require.Equal(t, exists, stderr("../../../host/nothing", "../host/nothing"))
}
