package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// worker adds fields to the test profile's worker container; pod adds them
// to the worker pod's spec.
func worker(fields string) func(string) string {
	return func(p string) string {
		return strings.Replace(p, "                - name: ray-worker\n", "                - name: ray-worker\n"+fields, 1)
	}
}

func pod(fields string) func(string) string {
	return func(p string) string {
		return strings.Replace(p, "              tolerations:", fields+"              tolerations:", 1)
	}
}

const privilegedWorker = "                  securityContext: {privileged: true}\n"

// A pull request is judged against its base branch, found the way CI names
// it (GITHUB_BASE_REF) and read from git objects, never from the checkout
// the pull request rewrote: each change below is one line of a profile or
// run that a hostile pull request could try. render-all --check names it
// and fails, whatever the pull request did to its own manifests and its
// own review-allow.yaml; once the base branch's allow-list permits it, the
// same pull request passes. diff names each one too.
func TestReviewNamesPrivilegeChanges(t *testing.T) {
	for _, tc := range privilegeChanges {
		t.Run(tc.name, func(t *testing.T) { judgePrivilegeChange(t, tc) })
	}
}

// privilegeChange is one line a hostile pull request adds, what diff and the
// gate name, and the base branch's allow-list that permits it.
type privilegeChange struct {
	name    string
	base    func(string) string // the base branch's profile, when not the test profile
	profile func(string) string // the pull request's change to it
	run     string
	want    []string
	gate    []string // the refusals, none when the change alone passes
	allow   string
}

// privilegeChanges is TestReviewNamesPrivilegeChanges' table.
var privilegeChanges = []privilegeChange{
	{name: "privileged worker", profile: worker(privilegedWorker),
		want:  []string{"privileged: (none) → ray-worker", "privilege + privileged"},
		gate:  []string{"Pod Security level rises from baseline to privileged", "gains 1 privilege(s): privileged;"},
		allow: "runs:\n  good:\n    podSecurity: privileged\n    privileges: [privileged]\n"},
	{name: "host network and PID", profile: pod("              hostNetwork: true\n              hostPID: true\n"),
		want:  []string{"hostNetwork: (none) → true", "hostPID: (none) → true"},
		gate:  []string{"Pod Security level rises", "gains 2 privilege(s): hostNetwork; hostPID;"},
		allow: "runs:\n  good:\n    podSecurity: privileged\n    privileges: [hostNetwork, hostPID]\n"},
	{name: "hostPath mount", profile: pod("              volumes: [{name: h, hostPath: {path: /etc}}]\n"),
		want:  []string{"hostPath: (none) → /etc"},
		gate:  []string{"Pod Security level rises", "privilege(s): hostPath /etc;"},
		allow: "runs:\n  good:\n    podSecurity: privileged\n    privileges: [hostPath /etc]\n"},
	{name: "another team's secret and a service account",
		profile: pod("              serviceAccountName: admin\n              volumes: [{name: s, secret: {secretName: other-team-creds}}]\n"),
		want:    []string{"serviceAccount: (none) → admin", "secrets: (none) → other-team-creds"}},
	{name: "move to kube-system", run: "  namespace: kube-system\n",
		want:  []string{"namespaces default → kube-system (MOVES)"},
		gate:  []string{"the run's namespaces change from [default] to [kube-system]"},
		allow: "runs:\n  good:\n    namespaces: [kube-system]\n"},
	// Inside a run that is privileged already the level cannot rise:
	// each control is a privilege of its own.
	{name: "unsafe sysctl in a privileged run", base: worker(privilegedWorker),
		profile: pod("              securityContext: {sysctls: [{name: kernel.msgmax, value: \"65536\"}]}\n"),
		want:    []string{"sysctls: (none) → kernel.msgmax", "privilege + sysctl kernel.msgmax"},
		gate:    []string{"privilege(s): sysctl kernel.msgmax;"},
		allow:   "runs:\n  good:\n    privileges: [\"sysctl kernel.*\"]\n"},
	{name: "unmasked /proc in a privileged run", base: worker(privilegedWorker),
		profile: func(p string) string {
			return strings.Replace(p, privilegedWorker, "                  securityContext: {privileged: true, procMount: Unmasked}\n", 1)
		},
		want:  []string{"procMount: (none) → Unmasked"},
		gate:  []string{"privilege(s): procMount Unmasked;"},
		allow: "default:\n  privileges: [procMount Unmasked]\n"},
	{name: "AppArmor unconfined in a privileged run", base: worker(privilegedWorker),
		profile: func(p string) string {
			return strings.Replace(p, privilegedWorker, "                  securityContext: {privileged: true, appArmorProfile: {type: Unconfined}}\n", 1)
		},
		want:  []string{"appArmor: (none) → Unconfined"},
		gate:  []string{"privilege(s): appArmor Unconfined;"},
		allow: "runs:\n  good:\n    privileges: [appArmor Unconfined]\n"},
	{name: "SELinux spc_t in a privileged run", base: worker(privilegedWorker),
		profile: func(p string) string {
			return strings.Replace(p, privilegedWorker, "                  securityContext: {privileged: true, seLinuxOptions: {type: spc_t}}\n", 1)
		},
		want:  []string{"seLinux: (none) → type spc_t"},
		gate:  []string{"privilege(s): seLinux type spc_t;"},
		allow: "runs:\n  good:\n    privileges: [seLinux type spc_t]\n"},
	{name: "runtime class, host aliases and DNS", base: worker(privilegedWorker),
		profile: pod("              runtimeClassName: kata\n              hostAliases: [{ip: 10.0.0.1, hostnames: [registry.internal]}]\n              dnsPolicy: None\n              dnsConfig: {nameservers: [10.9.9.9]}\n"),
		want:    []string{"runtimeClassName: (none) → kata", "hostAliases: (none) → 10.0.0.1 registry.internal", "dns: (none) → nameserver 10.9.9.9, policy None"},
		gate:    []string{"privilege(s): dns nameserver 10.9.9.9; dns policy None; hostAlias 10.0.0.1 registry.internal; runtimeClassName kata;"},
		allow:   "runs:\n  good:\n    privileges: [\"dns *\", \"hostAlias *\", runtimeClassName kata]\n"},
	{name: "head Service of type LoadBalancer",
		profile: func(p string) string {
			return strings.Replace(p, "      headGroupSpec:\n", "      headGroupSpec:\n        serviceType: LoadBalancer\n", 1)
		},
		want:  []string{"privilege + Service type LoadBalancer"},
		gate:  []string{"privilege(s): Service type LoadBalancer;"},
		allow: "runs:\n  good:\n    privileges: [Service type LoadBalancer]\n"},
}

// judgePrivilegeChange opens tc's pull request and checks that render-all
// --check names and refuses it, that diff names it, and that the base
// branch's allow-list lets it pass.
func judgePrivilegeChange(t *testing.T, tc privilegeChange) {
	w := newWorld(t)
	// The run is stopped on both sides, so its edit takes effect when it
	// starts again and is judged on its privileges alone (a started run's
	// edit is refused as never applied: TestGateRefusesEditsOfStartedRuns).
	w.file("runs/good/run.yaml", runYAML("good", stoppedRun))
	if tc.base != nil {
		w.file("configs/p.infra.yaml", tc.base(profileYAML))
	}
	w.openPR(t, "base")
	base, err := os.ReadFile(filepath.Join(w.repo, "configs", "p.infra.yaml"))
	require.NoError(t, err)
	if tc.profile != nil {
		w.file("configs/p.infra.yaml", tc.profile(string(base)))
	}
	if tc.run != "" {
		w.file("runs/good/run.yaml", runYAML("good", stoppedRun+tc.run))
	}
	// The pull request regenerates its manifests and allows itself.
	r := w.run("render-all", ".")
	require.Equal(t, 0, r.code, r.stderr)
	if tc.allow != "" {
		w.file("review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\n"+tc.allow)
	}
	w.git("add", "-A")
	w.git("commit", "-qm", "pr")

	w.env = []string{"GITHUB_BASE_REF=main"}
	r = w.run("render-all", ".", "--check")
	clean(t, r)
	noCommandLines(t, "stderr", r.stderr)
	require.Contains(t, r.stderr, "security gate: judged against main at ")
	require.Contains(t, r.stderr, "from GITHUB_BASE_REF=main")
	require.Contains(t, r.stderr, "good: security and scope:")
	for _, want := range tc.want {
		require.Contains(t, r.stderr, want)
	}
	if len(tc.gate) == 0 {
		require.Equal(t, 0, r.code, r.stderr)
		return
	}
	require.Equal(t, 1, r.code, "the pull request's own allow-list does not govern\n%s", r.stderr)
	for _, g := range tc.gate {
		require.Contains(t, r.stderr, "good: refused: ")
		require.Contains(t, r.stderr, g)
	}
	require.Contains(t, r.stderr, "review-allow.yaml: changed by this pull request")

	for _, format := range []string{"text", "markdown"} {
		w.file("old/good.yaml", string(w.committed("main", "manifests/good.yaml")))
		r = w.run("diff", "old", "manifests", "--output", format)
		require.Equal(t, 0, r.code, r.stderr)
		noCommandLines(t, format, r.stdout)
		for _, want := range tc.want {
			field := strings.Fields(want)[0]
			require.Contains(t, r.stdout, strings.TrimSuffix(field, ":"), format)
		}
	}
	require.NoError(t, os.RemoveAll(filepath.Join(w.repo, "old")))

	// Merged into the base branch, the allow-list governs the same
	// pull request (--base-ref names the base as CI would).
	w.git("checkout", "-q", "main")
	w.file("review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\n"+tc.allow)
	w.git("add", "-A")
	w.git("commit", "-qm", "allow")
	w.git("checkout", "-q", "pr")
	w.git("merge", "-q", "main")
	w.env = nil
	r = w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Equal(t, 0, r.code, "the base branch's allow-list permits it\n%s", r.stderr)
	require.NotContains(t, r.stderr, "refused:")
}

// committed is a file's bytes at a revision.
func (w *world) committed(rev, file string) []byte {
	w.t.Helper()
	out, err := exec.Command("git", "-C", w.repo, "show", rev+":"+file).Output()
	require.NoError(w.t, err)
	return out
}

// A run the base branch does not have (new, or renamed from one it has) is
// judged whole: against the restricted level, no namespace and no
// privilege, so a new run needing privileged in kube-system cannot slip
// past a gate that only compares runs present on both sides.
func TestGateJudgesNewAndRenamedRuns(t *testing.T) {
	w := newWorld(t)
	w.file("review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\ndefault:\n  podSecurity: baseline\n  namespaces: [default]\n")
	w.openPR(t, "base")

	// Renamed: good → better, same profile: the default entry covers it.
	require.NoError(t, os.Rename(filepath.Join(w.repo, "runs", "good"), filepath.Join(w.repo, "runs", "better")))
	w.file("runs/better/run.yaml", runYAML("better", ""))
	// New: privileged, in kube-system.
	w.file("configs/root.infra.yaml", worker(privilegedWorker)(profileYAML))
	w.file("runs/rooted/run.yaml", customRun("rooted", "../../configs/r.yaml", "../../configs/root.infra.yaml", "  namespace: kube-system\n"))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "pr")

	r := w.run("render-all", ".", "--check", "--base-ref", "main")
	clean(t, r)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "better: new run (or renamed: the base has no run of this name), judged whole")
	require.NotContains(t, r.stderr, "better: refused:", "the default entry permits baseline in default")
	require.Contains(t, r.stderr, "rooted: refused: the run's Pod Security level rises from restricted to privileged")
	require.Contains(t, r.stderr, "rooted: refused: the run's namespaces change from [] to [kube-system]")
	require.Contains(t, r.stderr, "rooted: refused: the run gains 1 privilege(s): privileged;")

	// Without the default entry the renamed run is refused as well.
	w.git("checkout", "-q", "main")
	require.NoError(t, os.Remove(filepath.Join(w.repo, "review-allow.yaml")))
	w.git("add", "-A")
	w.git("commit", "-qm", "no allow-list")
	w.git("checkout", "-q", "pr")
	w.git("merge", "-q", "main")
	r = w.run("render-all", ".", "--check", "--base-ref", "main")
	require.Contains(t, r.stderr, "better: refused: the run's namespaces change from [] to [default]")
}

// The base is told or found, never guessed: CI naming a base branch that
// is not there is an error (a shallow clone), a revision that reads as an
// option is refused, and with no base at all the gate says what it judged
// against instead of passing quietly.
func TestGateBaseIsToldOrFound(t *testing.T) {
	w := newWorld(t)
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "base")

	r := w.run("render-all", ".", "--check")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "security gate: warning: no base branch found: judged against this checkout's own committed manifests")

	w.env = []string{"GITHUB_BASE_REF=release-9"}
	r = w.run("render-all", ".", "--check")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "GITHUB_BASE_REF=release-9, but neither origin/release-9 nor release-9 is a commit here; fetch it")

	w.env = nil
	for _, ref := range []string{"--output=/tmp/x", "-p", "no-such-branch"} {
		r = w.run("render-all", ".", "--check", "--base-ref="+ref)
		require.Equal(t, 2, r.code, "%s: %s", ref, r.stderr)
		require.Contains(t, r.stderr, "--base-ref: ")
	}
	r = w.run("render-all", ".", "--base-ref", "main")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--base and --base-ref go with --check")
}
