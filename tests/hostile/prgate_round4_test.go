package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const clusterAdmin = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: pwn}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: default}]
`

// `kubectl apply -f manifests/` applies every .yaml, .yml and .json file
// there: a pull request that adds one beside the renders gets it applied
// without any run's review covering it. render-all --check refuses every
// such file no run renders, except the kustomization it maintains (or a
// user's kustomization.yaml that holds nothing kubectl can apply).
func TestCheckRefusesStrayManifests(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		refused             bool
		flags               []string
	}{
		{name: "yml", file: "pwn.yml", content: clusterAdmin, refused: true},
		{name: "json", file: "pwn.json", content: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"pwn"}}`, refused: true},
		{name: "upper-case yaml", file: "pwn.YAML", content: clusterAdmin, refused: true},
		{name: "yaml of no run, without render-all's label", file: "notes.yaml", content: clusterAdmin, refused: true},
		{name: "kustomization.yaml with a second document", file: "kustomization.yaml", content: "resources: [good.yaml]\n---\n" + clusterAdmin, refused: true},
		{name: "kustomization.yml", file: "kustomization.yml", content: "resources: [good.yaml]\n", refused: true},
		{name: "a user's kustomization.yaml", file: "kustomization.yaml", content: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [good.yaml]\n"},
		{name: "a README", file: "README.md", content: "kind: ClusterRoleBinding\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.openPR(t, "base")
			w.file(filepath.Join("manifests", tc.file), tc.content)
			w.git("add", "-A")
			w.git("commit", "-qm", "pr")

			r := w.run(append([]string{"render-all", ".", "--check", "--base-ref", "main"}, tc.flags...)...)
			clean(t, r)
			if !tc.refused {
				require.Equal(t, 0, r.code, r.stderr)
				require.NotContains(t, r.stderr, tc.file)
				return
			}
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "manifests/"+tc.file+": ")
			require.Contains(t, r.stderr, "refused: `kubectl apply -f manifests/` applies every .json, .yaml, .yml file there")

			// render-all itself leaves it alone and says so.
			r = w.run("render-all", ".")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, "manifests/"+tc.file+": ")
			require.Contains(t, r.stderr, "left alone (render-all --check refuses it)")
			_, err := os.Stat(filepath.Join(w.repo, "manifests", tc.file))
			require.NoError(t, err)
		})
	}

	// The kustomization render-all maintains is no stray.
	w := newWorld(t)
	require.Equal(t, 0, w.run("render-all", ".", "--kustomization").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "base")
	r := w.run("render-all", ".", "--check", "--kustomization")
	require.Equal(t, 0, r.code, r.stderr)
}

// The allow-list that governs is the base branch's as it is today: a pull
// request forked while main still allowed a privileged worker, and opened
// after main withdrew that permission, is refused, whether CI names the
// base or --base-ref does. Judged at the merge-base, the old list would
// let it through.
func TestGateReadsTheBaseBranchTip(t *testing.T) {
	w := newWorld(t)
	allow := func(extra string) {
		w.file("review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\ndefault:\n  namespaces: [default]\n"+extra)
	}
	allow("runs:\n  good:\n    podSecurity: privileged\n    privileges: [privileged]\n")
	w.openPR(t, "base: good may be privileged")
	profile, err := os.ReadFile(filepath.Join(w.repo, "configs", "p.infra.yaml"))
	require.NoError(t, err)
	w.file("configs/p.infra.yaml", worker(privilegedWorker)(string(profile)))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "pr: a privileged worker")

	w.git("checkout", "-q", "main")
	allow("")
	w.git("add", "-A")
	w.git("commit", "-qm", "main withdraws the permission")
	w.git("checkout", "-q", "pr")

	for _, how := range []struct {
		env  []string
		args []string
	}{
		{args: []string{"--base-ref", "main"}},
		{env: []string{"GITHUB_BASE_REF=main"}},
	} {
		w.env = how.env
		r := w.run(append([]string{"render-all", ".", "--check"}, how.args...)...)
		require.Equal(t, 1, r.code, "judged by today's allow-list\n%s", r.stderr)
		require.Contains(t, r.stderr, "(the base branch's tip)")
		require.Contains(t, r.stderr, "good: refused: ")
		require.Contains(t, r.stderr, "gains 1 privilege(s): privileged;")
	}
	w.env = nil
}

// An empty --base-ref or --base is a mistake in the CI script (an unset
// variable), never "no base branch found" and a pass against the pull
// request's own allow-list.
func TestGateEmptyBaseIsAnError(t *testing.T) {
	w := newWorld(t)
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "base")
	for _, args := range [][]string{
		{"--base-ref", ""}, {"--base-ref="}, {"--base", ""}, {"--base-ref", " "},
		{"--base-ref", "-x"}, {"--base-ref", "--upload-pack=touch /tmp/x"}, {"--base", "--check"},
	} {
		r := w.run(append([]string{"render-all", ".", "--check"}, args...)...)
		require.Equal(t, 2, r.code, "%q: %s", args, r.stderr)
		require.NotContains(t, r.stderr, "no base branch found", "%q", args)
		require.Contains(t, r.stderr, "--base", "%q", args)
	}
}

// A pull request that moves a run to another queue, raises its priority
// class or changes its run-wide topology changes who waits and who is
// preempted: render-all --check names it (and lets it pass: it is no
// privilege), diff names it in both formats.
func TestGateAndDiffNameWhoWaits(t *testing.T) {
	for _, tc := range []struct{ name, run, want string }{
		{name: "run-wide topology", run: "  annotations: {kai.scheduler/topology: t, kai.scheduler/topology-required-placement: zone}\n",
			want: "RayJob/default/good run-wide required-placement: (none) → zone"},
		{name: "Kueue priority class", run: "  labels: {kueue.x-k8s.io/priority-class: urgent}\n",
			want: "RayJob/default/good kueue priority-class: (none) → urgent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			// Stopped on both sides: a started run's edit is refused as
			// never applied (TestGateRefusesEditsOfStartedRuns).
			w.file("runs/good/run.yaml", runYAML("good", stoppedRun))
			w.openPR(t, "base")
			w.file("runs/good/run.yaml", strings.Replace(runYAML("good", stoppedRun), "  name: good\n", "  name: good\n"+tc.run, 1))
			r := w.run("render-all", ".")
			require.Equal(t, 0, r.code, r.stderr)
			w.git("add", "-A")
			w.git("commit", "-qm", "pr")

			r = w.run("render-all", ".", "--check", "--base-ref", "main")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, "good: scheduling (who waits, who is preempted):\n")
			require.Contains(t, r.stderr, "  "+tc.want+"\n")

			w.file("old/good.yaml", string(w.committed("main", "manifests/good.yaml")))
			r = w.run("diff", "old", "manifests")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, tc.want)
			r = w.run("diff", "old", "manifests", "--output", "markdown")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "Queue, priority or topology change in 1 run (who waits, who is preempted): `good`.")
		})
	}
}

// A run the base branch runs has started: an edit of what KubeRay reads
// once (the RayJob's cluster spec, its entrypoint) would merge and never
// reach it, so render-all --check refuses it, naming the fields and the
// ways that take effect, and diff names it. Stopping the run in the same
// change passes (the edit takes effect when it starts again), and so does
// starting it again, edited, in the next.
func TestGateRefusesEditsOfStartedRuns(t *testing.T) {
	w := newWorld(t)
	w.openPR(t, "base")
	edited := runYAML("good", "  overrides: [+policy.max_total_sequence_length=512]\n")
	w.file("runs/good/run.yaml", edited)
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "edit a started run")
	r := w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "good: refused: the run has started (the base branch runs it) and this change edits what KubeRay or Kueue never apply to a running run: RayJob/default/good: spec.entrypoint")
	require.Contains(t, r.stderr, "stop it (spec.state: stopped)")
	require.Contains(t, w.diffWithBase(), "started run")

	// Stopped in the same change: passes, and the review says it stops.
	w.file("runs/good/run.yaml", runYAML("good", stoppedRun+"  overrides: [+policy.max_total_sequence_length=512]\n"))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "stop it")
	r = w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, w.diffWithBase(), "stopped by this change")

	// Merged; the next change starts it again, edited.
	w.git("checkout", "-q", "main")
	w.git("merge", "-q", "pr")
	w.git("checkout", "-q", "pr")
	w.file("runs/good/run.yaml", runYAML("good", "  overrides: [+policy.max_total_sequence_length=1024]\n"))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "start it again")
	r = w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, w.diffWithBase(), "started again by this change")
}

// diffWithBase is diff's text summary of the run good, main's committed
// manifest against the checkout's.
func (w *world) diffWithBase() string {
	w.t.Helper()
	w.write(filepath.Join(w.repo, "old", "good.yaml"), string(w.committed("main", "manifests/good.yaml")))
	defer func() { require.NoError(w.t, os.RemoveAll(filepath.Join(w.repo, "old"))) }()
	r := w.run("diff", "old/good.yaml", "manifests/good.yaml")
	require.Equal(w.t, 0, r.code, r.stderr)
	return r.stdout
}
