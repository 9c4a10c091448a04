package review

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
)

const gateAllowHead = "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\n"

func gateAllow(t *testing.T, body string) *renderall.Allow {
	t.Helper()
	a, err := renderall.ParseAllow(renderall.AllowFile, []byte(gateAllowHead+body))
	require.NoError(t, err)
	return a
}

// A run is refused when its level rises (a new run from restricted), it
// enters a namespace, edits a started run, or gains a privilege, each
// unless the base's allow-list permits it; a privilege only partly
// allowed names the rest.
func TestRefusals(t *testing.T) {
	changed := func(d RunDiff) RunDiff { d.Name, d.Status = "r", Changed; return d }
	cases := []struct {
		name  string
		d     RunDiff
		allow string
		want  []string // one substring per refusal, in order
	}{
		{"nothing rises", changed(RunDiff{PodSecurityBefore: "baseline", PodSecurityAfter: "baseline", NamespacesBefore: []string{"a"}, NamespacesAfter: []string{"a"}}), "", nil},
		{"the level rises", changed(RunDiff{PodSecurityBefore: "baseline", PodSecurityAfter: "privileged"}), "",
			[]string{"level rises from baseline to privileged; refused unless the base branch's review-allow.yaml allows it (runs.r.podSecurity: privileged)"}},
		{"the level rises, allowed", changed(RunDiff{PodSecurityBefore: "baseline", PodSecurityAfter: "privileged"}), "runs:\n  r: {podSecurity: privileged}\n", nil},
		{"a new run is judged from restricted", RunDiff{Name: "r", Status: Added, PodSecurityBefore: "privileged", PodSecurityAfter: "baseline"}, "",
			[]string{"rises from restricted to baseline"}},
		{"a new restricted run", RunDiff{Name: "r", Status: Added, PodSecurityAfter: "restricted"}, "", nil},
		{"a namespace entered, one allowed", changed(RunDiff{NamespacesBefore: []string{"a"}, NamespacesAfter: []string{"a", "b", "c"}}), "default: {namespaces: [b]}\n",
			[]string{"namespaces change from [a] to [a, b, c]; refused unless the base branch's review-allow.yaml lists [c]"}},
		{"a namespace left", changed(RunDiff{NamespacesBefore: []string{"a", "b"}, NamespacesAfter: []string{"a"}}), "", nil},
		{"a started run edited and restarted", changed(RunDiff{StartedEdits: []string{"RayJob/j: spec.entrypoint"}, StartedRestarts: []string{"RayJob/j: replicas"}}), "",
			[]string{"never apply to a running run: RayJob/j: spec.entrypoint", "a restart from step 0"}},
		{"privileges gained, one allowed by a pattern", changed(RunDiff{PrivilegesAdded: []string{"sysctl net.core.x", "privileged", "hostPID"}}), "runs:\n  r: {privileges: ['sysctl net.*']}\n",
			[]string{"the run gains 2 privilege(s): privileged; hostPID; refused unless"}},
		{"privileges removed", changed(RunDiff{PrivilegesRemoved: []string{"privileged"}}), "", nil},
		{"all at once, in order", changed(RunDiff{PodSecurityBefore: "restricted", PodSecurityAfter: "baseline", NamespacesAfter: []string{"x"}, PrivilegesAdded: []string{"hostNetwork"}}), "",
			[]string{"level rises", "namespaces change from [] to [x]", "gains 1 privilege(s): hostNetwork"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var allow *renderall.Allow
			if c.allow != "" {
				allow = gateAllow(t, c.allow)
			}
			got := refusals(c.d, allow)
			require.Len(t, got, len(c.want), "%q", got)
			for i, w := range c.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// The gate judges each run whose manifest differs from the base's against
// the base's allow-list, prints its security section and refusals, names
// its scheduling changes, shows (never obeys) the pull request's own
// allow-list change, and says when no base is known.
func TestSecurityGate(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: tools, namespace: lab}
spec:
  template:
    spec: {containers: [{name: c, image: img:1%s}]}
`
	render := fmt.Sprintf(deployment, "")
	privileged := fmt.Sprintf(deployment, ", securityContext: {privileged: true}")
	queued := strings.Replace(render, "namespace: lab}", "namespace: lab, labels: {kueue.x-k8s.io/queue-name: team}}", 1)
	bumped := strings.Replace(render, "img:1", "img:2", 1)
	allowSA := "runs:\n  r: {podSecurity: privileged, privileges: ['privileged*']}\n"
	cases := []struct {
		name        string
		cur, base   string
		known       bool
		baseAllow   string
		prAllow     string
		failed      bool
		want, never []string
	}{
		{name: "unchanged", cur: render, base: render, known: true, want: []string{"security gate: judged against origin/main\n"}, never: []string{"r: "}},
		{name: "an image bump is no security change", cur: bumped, base: render, known: true, never: []string{"r: security and scope"}},
		{name: "a privileged container refused", cur: privileged, base: render, known: true, failed: true,
			want: []string{"r: security and scope:\n", "  Deployment/lab/tools privileged: (none) → c\n",
				"r: refused: the run's Pod Security level rises from baseline to privileged", "r: refused: the run gains 1 privilege(s): privileged;"}},
		{name: "a queue change is named, not refused", cur: queued, base: render, known: true,
			want: []string{"r: scheduling (who waits, who is preempted):\n"}, never: []string{"refused"}},
		{name: "allowed by the base", cur: privileged, base: render, known: true, baseAllow: allowSA,
			want: []string{"r: security and scope:\n"}, never: []string{"refused"}},
		{name: "the pull request's own allow-list is shown, not obeyed", cur: privileged, base: render, known: true, prAllow: allowSA, failed: true,
			want: []string{"review-allow.yaml: changed by this pull request", "  +runs:", "r: refused:"}},
		{name: "a new run is judged whole", cur: render, known: true, failed: true,
			want: []string{"r: new run (or renamed: the base has no run of this name), judged whole; security and scope:", "r: refused: the run's Pod Security level rises from restricted"}},
		{name: "a base that is no render", cur: render, base: "kind: [", known: true, failed: true,
			want: []string{"r: the base manifest is not a render (", "judged as a new run", "r: new run"}},
		{name: "no base known", cur: render, base: render, want: []string{"security gate: warning: no base found\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := &renderall.Result{Runs: []string{"r", "failed"}, Files: map[string][]byte{"r": []byte(c.cur)}}
			base := renderall.Base{From: "origin/main", Known: c.known, Manifests: map[string][]byte{}, AllowData: []byte(gateAllowHead + c.baseAllow)}
			if !c.known {
				base.From = "no base found"
			}
			if c.base != "" {
				base.Manifests["r"] = []byte(c.base)
			}
			if c.baseAllow != "" {
				base.Allow = gateAllow(t, c.baseAllow)
			}
			pr := base.AllowData
			if c.prAllow != "" {
				pr = []byte(gateAllowHead + c.prAllow)
			}
			var out bytes.Buffer
			failed, err := SecurityGate(&out, res, base, pr)
			require.NoError(t, err)
			assert.Equal(t, c.failed, failed, out.String())
			for _, w := range c.want {
				assert.Contains(t, out.String(), w)
			}
			for _, w := range c.never {
				assert.NotContains(t, out.String(), w)
			}
		})
	}
	_, err := SecurityGate(&bytes.Buffer{}, &renderall.Result{Runs: []string{"r"}, Files: map[string][]byte{"r": []byte("kind: [")}}, renderall.Base{Known: true}, nil)
	assert.Error(t, err, "a run's own render that is no render is an error")
}
