package hostile

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// Round four of the hostile tier: inputs that reach a shell or the host.

// shellProfile's entrypoint puts a value of the run into the driver call
// three ways: an unquoted word, inside double quotes, and ${run.name}.
var shellProfile = strings.Replace(profileYAML, "    python examples/run_grpo.py --config r.yaml\n",
	"    python examples/run_grpo.py --config r.yaml +a=${oc.env:V} \"+b=${oc.env:V}\" +c=${run.name}\n", 1)

// stubShell runs script with sh (or bash) in a fresh directory whose PATH
// starts with a stub python recording its argv, one word per line-free
// NUL-terminated record; it returns the words and the directory.
func stubShell(t *testing.T, shellPath, script string) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	stub := filepath.Join(dir, "stub")
	require.NoError(t, os.MkdirAll(stub, 0o755))
	rec := filepath.Join(dir, "argv")
	for _, name := range []string{"python", "uv"} {
		require.NoError(t, os.WriteFile(filepath.Join(stub, name), []byte("#!/bin/sh\nprintf '%s\\0' \"$@\" >> \""+rec+"\"\n"), 0o755))
	}
	cmd := exec.Command(shellPath, "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + stub + ":/usr/bin:/bin", "HOME=" + dir}
	out, _ := cmd.CombinedOutput()
	b, err := os.ReadFile(rec)
	require.NoError(t, err, "the stub driver never ran: %s", out)
	words := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	return words, dir
}

// entrypointOf is the RayJob's spec.entrypoint of a rendered manifest.
func entrypointOf(t *testing.T, manifest string) string {
	t.Helper()
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var o struct {
			Kind string `json:"kind"`
			Spec struct {
				Entrypoint string `json:"entrypoint"`
			} `json:"spec"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
		if o.Kind == "RayJob" {
			return o.Spec.Entrypoint
		}
	}
	t.Fatal("no RayJob in the manifest")
	return ""
}

// A value of the run (spec.env read through ${oc.env:...}, the run's name)
// lands in the entrypoint as the words the profile wrote, or is refused:
// evaluated by a real /bin/sh and bash, the stub driver receives exactly
// the intended argv and no injected command runs.
func TestRunValuesStayShellWords(t *testing.T) {
	shells := []string{"/bin/sh"}
	if p, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, p)
	}
	for _, v := range []string{
		"plain-value_1.2",
		"$(touch pwned)",
		"`touch pwned`",
		"x; touch pwned",
		"x && touch pwned #",
		"x\ntouch pwned",
		"it's",
		`say "hi`,
		`back\slash $HOME`,
	} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t)
			w.file("configs/p.infra.yaml", shellProfile)
			env, err := yaml.Marshal(map[string]any{"env": map[string]string{"V": v}})
			require.NoError(t, err)
			w.file("runs/good/run.yaml", runYAML("good", "  "+strings.ReplaceAll(strings.TrimSpace(string(env)), "\n", "\n  ")+"\n"))
			r := w.run("render-all", ".")
			if r.code != 0 {
				require.Equal(t, 1, r.code, r.stderr)
				require.Contains(t, r.stderr, "launch.entrypoint", "the refusal names the field")
				require.Contains(t, r.stderr, "${oc.env:V}", "and the interpolation")
				require.NotContains(t, r.stderr, v, "the value itself is not printed (it may be a secret)")
				require.True(t, strings.ContainsAny(v, "$`; \n'\"\\"), "a plain value renders: %s", r.stderr)

				// The function refuses it the same way.
				q, err := json.Marshal(v)
				require.NoError(t, err)
				w.stdin = strings.Replace(resourceList(t, filesConfigMap(recipeYAML, shellProfile), nil), "    user: alice\n", "    user: alice\n    env: {V: "+string(q)+"}\n", 1)
				require.Contains(t, w.stdin, "env: {V:")
				r = w.run("fn")
				require.Equal(t, 1, r.code, r.stderr)
				require.Contains(t, r.stdout+r.stderr, "${oc.env:V} puts a value of the run into this shell command")
				require.NotContains(t, r.stdout, "kind: RayJob", "nothing rendered")
				return
			}
			data, err := os.ReadFile(filepath.Join(w.repo, "manifests", "good.yaml"))
			require.NoError(t, err)
			ep := entrypointOf(t, string(data))
			for _, sh := range shells {
				words, dir := stubShell(t, sh, ep)
				require.NoFileExists(t, filepath.Join(dir, "pwned"), "%s ran an injected command: %q", sh, ep)
				require.GreaterOrEqual(t, len(words), 6, "%s: %q", sh, words)
				require.Equal(t, []string{"+a=" + v, "+b=" + v, "+c=good"}, words[3:6], "%s: the driver's argv from %q", sh, ep)
			}
		})
	}
	t.Run("a run name that is not a plain word", func(t *testing.T) {
		w := newWorld(t)
		w.file("configs/p.infra.yaml", shellProfile)
		w.file("runs/good/run.yaml", runYAML(`"a;touch pwned"`, "  env: {V: x}\n"))
		r := w.run("render-all", ".")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "metadata.name")
	})
}

// leakWorld is a repository whose recipe's defaults: reach the host's
// secret file (absolute, and as ../../host from the recipe) and whose
// profile ships the merged recipe in a ConfigMap, with a kustomization in
// deploy/ whose generator names root as its files.
func leakWorld(t *testing.T, root, defaults string) *world {
	t.Helper()
	w := newWorld(t)
	w.file("configs/leak.yaml", "defaults: "+strings.ReplaceAll(defaults, "HOST", w.host)+"\n"+recipeYAML)
	w.file("configs/p.infra.yaml", strings.Replace(profileYAML, "launch:\n", "launch:\n  recipeSource: configMap\n", 1))
	w.file("deploy/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators: [gen.yaml]\n")
	w.file("deploy/gen.yaml", "apiVersion: "+vocab.APIVersion+"\nkind: "+krm.PluginKind+"\nmetadata: {name: runs}\nfiles: "+root+"\nruns: [runs.yaml]\nwarnings: ignore\n")
	w.file("deploy/runs.yaml", customRun("leak", "../configs/leak.yaml", "../configs/p.infra.yaml", ""))
	w.track()
	return w
}

// hostLeaks are the generator roots and defaults: paths a pull request
// would use to read a host file into the build.
// HOST stands for the host folder of the secret file.
var hostLeaks = []struct{ name, root, defaults string }{
	{"files: /", "/", "HOST/secret.yaml"},
	{"files: ../..", "../..", "../../host/secret.yaml"},
}

// The generator's files: root is confined to the repository holding the
// kustomization, as kustomize's load restrictor confines a kustomization's
// files: a recipe's defaults: never read a host file into the build (with
// recipeSource: configMap the merged recipe's text is in the output).
func TestGeneratorFilesStayInTheRepository(t *testing.T) {
	for _, c := range hostLeaks {
		t.Run(c.name, func(t *testing.T) {
			w := leakWorld(t, c.root, c.defaults)
			t.Chdir(filepath.Join(w.repo, "deploy"))
			var out bytes.Buffer
			err := krm.RunPlugin(krm.PluginOptions{Args: []string{"gen.yaml"}, Dir: ".", Stdout: &out})
			require.Error(t, err)
			require.NotContains(t, out.String(), fileSecret)
			require.NotContains(t, err.Error(), fileSecret)
			require.Contains(t, err.Error(), `NemoRLRunGenerator "runs" files`)
			require.Contains(t, err.Error(), "outside the repository")
		})
	}
}

// The same through the pinned kustomize: the exec plugin and the KRM exec
// function under generators:.
func TestGeneratorFilesStayInTheRepositoryKustomize(t *testing.T) {
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set (eval \"$(./hack/tools.sh)\")")
	}
	for _, c := range hostLeaks {
		t.Run(c.name, func(t *testing.T) {
			w := leakWorld(t, c.root, c.defaults)
			home := filepath.Join(w.dir, "plugins")
			r := w.run("kustomize-plugin", "--plugin-home", home)
			require.Equal(t, 0, r.code, r.stderr)
			fnGen := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nrl\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: " + clirun.Binary(t) + "\n        args: [fn, --files, " + c.root + ", --runs, runs.yaml]\n"
			w.file("deploy-fn/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators: [gen.yaml]\n")
			w.file("deploy-fn/gen.yaml", fnGen)
			w.file("deploy-fn/runs.yaml", customRun("leak", "../configs/leak.yaml", "../configs/p.infra.yaml", ""))
			w.track()
			for _, dir := range []string{"deploy", "deploy-fn"} {
				cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "--load-restrictor", "LoadRestrictionsNone", filepath.Join(w.repo, dir))
				cmd.Env = append(os.Environ(), "KUSTOMIZE_PLUGIN_HOME="+home, "TMPDIR="+t.TempDir())
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.Error(t, err, "%s: kustomize built %s", dir, out)
				require.NotContains(t, string(out), fileSecret, dir)
				require.NotContains(t, stderr.String(), fileSecret, dir)
				require.Contains(t, stderr.String(), "outside the repository", dir)
			}
		})
	}
}

// spec.recipeRoot must stay inside the package root even when nothing is
// read through it (the recipe comes from a ConfigMap and ships with the
// run): render-all and the KRM function refuse it.
func TestRecipeRootOutsideTheRootIsRefused(t *testing.T) {
	for _, root := range []string{"/", "/etc", "../../..", "../../../host"} {
		t.Run(root, func(t *testing.T) {
			w := newWorld(t)
			w.file("configs/p.infra.yaml", strings.Replace(profileYAML, "launch:\n", "launch:\n  recipeSource: configMap\n", 1))
			w.file("runs/good/run.yaml", runYAML("good", "  recipeRoot: "+root+"\n"))
			r := w.run("render-all", ".")
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "spec.recipeRoot")

			profile := strings.Replace(profileYAML, "launch:\n", "launch:\n  recipeSource: configMap\n", 1)
			rl := resourceList(t, filesConfigMap(recipeYAML, profile), nil)
			rl = strings.Replace(rl, "    user: alice\n", "    user: alice\n    recipeRoot: "+root+"\n", 1)
			require.Contains(t, rl, "recipeRoot: "+root)
			w.stdin = rl
			r = w.run("fn")
			require.Equal(t, 1, r.code, r.stderr+r.stdout)
			require.Contains(t, r.stdout+r.stderr, "spec.recipeRoot")
			require.NotContains(t, r.stdout, "kind: RayJob", "nothing rendered")
		})
	}
}

// After `git submodule init` without `update`, render-all says which
// submodule is missing and how to check it out.
func TestSubmoduleInitWithoutUpdate(t *testing.T) {
	w := newWorld(t)
	sub := filepath.Join(w.dir, "nemo-rl")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, "examples", "configs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "examples", "configs", "r.yaml"), []byte(recipeYAML), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "r"}} {
		out, err := exec.Command("git", append([]string{"-C", sub}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	w.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/nemo-rl")
	w.file("runs/sub/run.yaml", customRun("sub", "../../vendor/nemo-rl/examples/configs/r.yaml", "../../configs/p.infra.yaml", ""))
	w.track()
	w.git("commit", "-q", "-m", "runs")
	// A fresh clone with the submodule registered but not checked out.
	clone := filepath.Join(w.dir, "clone")
	out, err := exec.Command("git", "clone", "-q", w.repo, clone).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("git", "-C", clone, "submodule", "init").CombinedOutput()
	require.NoError(t, err, "%s", out)
	w.repo = clone
	r := w.run("render-all", ".")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "vendor/nemo-rl")
	require.Contains(t, r.stderr, "git submodule update --init vendor/nemo-rl")
}

// kustomize-inputs -k DIR with DIR outside --root: a clear error naming
// the flag, never a raw Go error.
func TestKustomizeInputsKustomizationOutsideRoot(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.dir, "elsewhere", "kustomization.yaml"), "resources: []\n")
	for _, mode := range []string{"", "--write", "--check"} {
		args := []string{"kustomize-inputs", "runs/good/run.yaml", "-k", filepath.Join(w.dir, "elsewhere"), "--root", "."}
		if mode != "" {
			args = append(args, mode)
		}
		r := w.run(args...)
		if r.code == 0 {
			continue
		}
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "-k")
		require.Contains(t, r.stderr, "--root")
		require.NotContains(t, r.stderr, "Rel: can't make", "%v", args)
		require.NotContains(t, r.stderr, w.dir, "%v: the message names the flags, not this machine's paths", args)
	}
}
