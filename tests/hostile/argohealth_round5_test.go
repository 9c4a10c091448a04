package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
)

// The shipped Argo CD health checks against any JSON a client can store in
// a RayJob or RayCluster (status, labels, annotations, spec), run as Argo CD
// runs them (internal/argohealth: its sandbox, its budget): no Lua error,
// a health status Argo CD accepts, a message of at most MessageCap bytes
// without control characters, Healthy only on success, "stopped" only when
// the spec stops the run (runparams.StateFromSpec), and time bounded
// whatever the size of the input.

const (
	jobCheck     = "rayjob-health.lua"
	clusterCheck = "raycluster-health.lua"
	stateKey     = vocab.StateAnnotation
)

// verdicts are the statuses the checks report (Argo CD also knows Missing
// and Unknown, which they never claim).
var verdicts = []string{"Healthy", "Progressing", "Degraded", "Suspended"}

// checks is the two shipped scripts by file name.
func checks(t testing.TB) map[string]string {
	return map[string]string{jobCheck: argohealth.Script(t, jobCheck), clusterCheck: argohealth.Script(t, clusterCheck)}
}

// judge runs check on obj and returns what the invariants say is wrong
// with its verdict, or the run's error.
func judge(sandbox argohealth.Sandbox, budget time.Duration, script, check string, obj map[string]any) (status, message string, err error) {
	status, message, err = argohealth.RunIn(sandbox, budget, script, obj)
	if err != nil {
		return "", "", err
	}
	var problems []string
	if !slices.Contains(verdicts, status) {
		problems = append(problems, fmt.Sprintf("status %q is none of %v", status, verdicts))
	}
	if len(message) > argohealth.MessageCap {
		problems = append(problems, fmt.Sprintf("message of %d bytes, over %d", len(message), argohealth.MessageCap))
	}
	if i := strings.IndexFunc(message, unicode.IsControl); i >= 0 {
		problems = append(problems, fmt.Sprintf("control character %q at byte %d of the message", []rune(message[i:])[0], i))
	}
	if status == "Healthy" && !succeeded(check, obj) {
		problems = append(problems, "Healthy, yet the object does not report success")
	}
	if (strings.HasPrefix(message, "stopped (") || strings.HasPrefix(message, "stopping (")) && !stoppedBySpec(obj) {
		problems = append(problems, "a stopped message, yet the spec does not stop the run")
	}
	if len(problems) > 0 {
		return status, message, errors.New(strings.Join(problems, "; "))
	}
	return status, message, nil
}

// at walks obj along keys, nil when a step is not an object.
func at(obj any, keys ...string) any {
	for _, k := range keys {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[k]
	}
	return obj
}

func text(obj any, keys ...string) string {
	s, _ := at(obj, keys...).(string)
	return s
}

// stoppedBySpec is runparams.StateFromSpec on the object's spec and labels.
func stoppedBySpec(obj map[string]any) bool {
	suspended, _ := at(obj, "spec", "suspend").(bool)
	return runparams.StateFromSpec(true, suspended, text(obj, "metadata", "labels", vocab.KueueQueueLabel)) == runparams.Stopped
}

// condTrue says whether the first of the conditions Argo CD hands the
// script (null entries dropped, ListMax looked at) with type typ is True.
func condTrue(obj map[string]any, typ string) bool {
	list, _ := at(obj, "status", "conditions").([]any)
	n := 0
	for _, c := range list {
		if c == nil {
			continue
		}
		if n++; n > argohealth.ListMax {
			return false
		}
		if at(c, "type") == typ {
			return at(c, "status") == "True"
		}
	}
	return false
}

// succeeded is the success a check may call Healthy: a RayJob Complete
// with its job SUCCEEDED; a RayCluster ready or provisioned and not failed.
func succeeded(check string, obj map[string]any) bool {
	if check == jobCheck {
		return text(obj, "status", "jobDeploymentStatus") == "Complete" && text(obj, "status", "jobStatus") == "SUCCEEDED"
	}
	state := text(obj, "status", "state")
	failed := state == "failed" || condTrue(obj, "ReplicaFailure")
	return (state == "ready" || condTrue(obj, "RayClusterProvisioned")) && !failed
}

// sandboxes are Argo CD's two ways to run a custom check (useOpenLibs
// unset, set): a check must say the same in both.
var sandboxes = []argohealth.Sandbox{argohealth.Default, argohealth.OpenLibs}

// within runs check in both sandboxes under a per-case deadline: the
// checks' work is bounded by their caps, not by the input, so a quadratic
// slip takes seconds where a correct check takes milliseconds. A case is
// retried twice before it counts as over, so a busy machine does not fail
// it.
func within(t *testing.T, deadline time.Duration, script, check string, obj map[string]any) (status, message string) {
	t.Helper()
	for i, sandbox := range sandboxes {
		var st, msg string
		var err error
		for range 3 {
			st, msg, err = judge(sandbox, deadline, script, check, obj)
			if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
				break
			}
		}
		require.NoError(t, err, "%s, sandbox %d", check, sandbox)
		if i > 0 {
			require.Equal(t, [2]string{status, message}, [2]string{st, msg}, "%s: the sandboxes disagree", check)
		}
		status, message = st, msg
	}
	return status, message
}

func rayJobObj(status map[string]any) map[string]any {
	return map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": map[string]any{"name": "r"}, "status": status}
}

func rayClusterObj(conds ...any) map[string]any {
	return map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": map[string]any{"name": "c"},
		"status": map[string]any{"conditions": conds}}
}

func failure(message any) map[string]any {
	return map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreateWorkerPod", "message": message}
}

// with returns obj with value set at the path keys (objects made on the way).
func with(obj map[string]any, value any, keys ...string) map[string]any {
	m := obj
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
	return obj
}

func nested(depth int, leaf any) any {
	for range depth {
		leaf = []any{map[string]any{"x": leaf}}
	}
	return leaf
}

// Each surface the hostile-input review named, with the verdict the check
// must give; huge messages each evaluated in well under 50 ms.
func TestArgoHealthNamedCases(t *testing.T) {
	scripts := checks(t)
	newlines := strings.Repeat("\n", 32<<10)
	mib := strings.Repeat("pods \"w\" is forbidden:\x1b\u0085violates PodSecurity\r\n", 1<<20/48)
	running := map[string]any{"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}
	for _, tc := range []struct {
		name, check  string
		obj          map[string]any
		want, prefix string
	}{
		{"boolean jobDeploymentStatus", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": true}), "Progressing", "waiting for KubeRay"},
		{"number reason", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": 7}), "Degraded", "Failed, job FAILED"},
		{"table message", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": "Failed", "message": map[string]any{"a": "b"}}), "Degraded", "Failed"},
		{"status a string", jobCheck, map[string]any{"status": "Complete"}, "Progressing", "waiting for KubeRay"},
		{"list for jobStatus on Complete", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": "Complete", "jobStatus": []any{"SUCCEEDED"}}), "Degraded", "Complete"},
		{"labels a string", jobCheck, with(with(rayJobObj(running), "kueue.x-k8s.io/queue-name=q", "metadata", "labels"), true, "spec", "suspend"), "Progressing", "Running, job RUNNING"},
		{"queue label a number", jobCheck, with(with(rayJobObj(running), 3.0, "metadata", "labels", vocab.KueueQueueLabel), true, "spec", "suspend"), "Progressing", "Running, job RUNNING"},
		{"suspend the string true", jobCheck, with(with(rayJobObj(running), "stopped", "metadata", "annotations", stateKey), "true", "spec", "suspend"), "Progressing", "Running, job RUNNING"},
		{"annotated stopped, running unsuspended", jobCheck, with(rayJobObj(running), "stopped", "metadata", "annotations", stateKey), "Progressing", "Running, job RUNNING"},
		{"annotated stopped, suspended, Kueue's label", jobCheck, with(with(with(rayJobObj(running), "stopped", "metadata", "annotations", stateKey), "q", "metadata", "labels", vocab.KueueQueueLabel), true, "spec", "suspend"), "Suspended", "queued by Kueue in LocalQueue q"},
		{"stopped by spec and Git", jobCheck, with(with(rayJobObj(running), "stopped", "metadata", "annotations", stateKey), true, "spec", "suspend"), "Suspended", "stopped (state: stopped in Git)"},
		{"32 KiB of newlines as the message", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": "Failed", "message": newlines}), "Degraded", "Failed:"},
		{"1 MiB message", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": "Failed", "message": mib}), "Degraded", `Failed: pods "w" is forbidden: violates PodSecurity: pods`},
		{"1 MiB deployment status", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": mib}), "Progressing", `pods "w"`},
		{"deeply nested status", jobCheck, rayJobObj(map[string]any{"jobDeploymentStatus": nested(500, "Complete")}), "Progressing", "waiting"},
		{"conditions a number", clusterCheck, map[string]any{"status": map[string]any{"conditions": 5, "state": "ready"}}, "Healthy", "ready"},
		{"conditions an object", clusterCheck, map[string]any{"status": map[string]any{"conditions": map[string]any{"type": "ReplicaFailure", "status": "True"}}}, "Progressing", "pods starting"},
		{"conditions of the wrong types", clusterCheck, rayClusterObj(nil, 1, "x", []any{}, true, map[string]any{"type": []any{"ReplicaFailure"}, "status": "True"}), "Progressing", "pods starting"},
		{"failure past the first 64", clusterCheck, rayClusterObj(append(slices.Repeat([]any{map[string]any{"type": "HeadPodReady"}}, 64), failure("late"))...), "Progressing", "pods starting"},
		{"provisioned and failed", clusterCheck, rayClusterObj(failure("quota"), map[string]any{"type": "RayClusterProvisioned", "status": "True"}), "Degraded", "FailedCreateWorkerPod: quota"},
		{"number reason of a failure", clusterCheck, rayClusterObj(map[string]any{"type": "ReplicaFailure", "status": "True", "reason": 1, "message": "x\ny"}), "Degraded", "x: y"},
		{"32 KiB of newlines as a failure's message", clusterCheck, rayClusterObj(failure(newlines)), "Degraded", "FailedCreateWorkerPod"},
		{"1 MiB failure message", clusterCheck, rayClusterObj(failure(mib)), "Degraded", `FailedCreateWorkerPod: pods "w" is forbidden: violates PodSecurity: pods`},
		{"annotated stopped, running unsuspended cluster", clusterCheck, with(map[string]any{"status": map[string]any{"state": "ready"}}, "stopped", "metadata", "annotations", stateKey), "Healthy", "ready"},
		{"state failed with a table reason", clusterCheck, map[string]any{"status": map[string]any{"state": "failed", "reason": map[string]any{}}}, "Degraded", "state failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, msg := within(t, 50*time.Millisecond, scripts[tc.check], tc.check, tc.obj)
			require.Equal(t, tc.want, st, msg)
			require.True(t, strings.HasPrefix(msg, tc.prefix), "message %q does not start with %q", msg, tc.prefix)
		})
	}
}

// gen builds hostile objects from a seeded source: every field the checks
// read, and the objects around them, of any JSON type, huge, deeply
// nested, escape-laden, or one of the values the checks look for.
type gen struct {
	r   *rand.Rand
	mib string
}

// meaningful are the values the checks look for.
var meaningful = []string{"Complete", "SUCCEEDED", "Failed", "FAILED", "ValidationFailed", "Suspended", "Suspending",
	"Initializing", "Running", "RUNNING", "New", "Waiting", "Retrying", "True", "False", "ready", "failed", "suspended",
	"ReplicaFailure", "RayClusterProvisioned", "RayClusterSuspended", "RayClusterSuspending", "stopped", "run", "lab-queue", ""}

var escapes = []string{"\x00", "a\nb\r\nc", "\x1b[2J\x1b[31mred", "\u0085\u2028\u2029", "tab\there", "ü日本\U0001F600", "\x7f",
	strings.Repeat("\n", 32<<10), strings.Repeat("é", 600), strings.Repeat("x\t", 700), `"quoted" \ back`, "%s%d%%", "stopped"}

func (g *gen) pick(xs ...any) any { return xs[g.r.IntN(len(xs))] }

func (g *gen) str() string {
	switch n := g.r.IntN(100); {
	case n < 55:
		return meaningful[g.r.IntN(len(meaningful))]
	case n < 90:
		return escapes[g.r.IntN(len(escapes))]
	case n < 91:
		return g.mib[:g.r.IntN(len(g.mib))]
	}
	runes := make([]rune, g.r.IntN(1500))
	for i := range runes {
		runes[i] = rune(g.r.IntN(0x250))
	}
	return string(runes)
}

// value is any JSON value, depth levels of lists and objects at most.
func (g *gen) value(depth int) any {
	n := g.r.IntN(10)
	if depth <= 0 && n >= 6 {
		n = g.r.IntN(6)
	}
	switch n {
	case 0:
		return nil
	case 1:
		return g.pick(true, false)
	case 2:
		return g.pick(0.0, -1.0, 3.5, 1e300, float64(1<<53))
	case 3, 4, 5:
		return g.str()
	case 6:
		l := make([]any, g.r.IntN(4))
		for i := range l {
			l[i] = g.value(depth - 1)
		}
		return l
	case 7:
		return map[string]any{g.str(): g.value(depth - 1), "type": g.value(depth - 1)}
	case 8:
		return nested(g.pick(2, 5, 20, 20, 300).(int), g.str())
	}
	return g.pick(true, "True", "stopped")
}

// field is what a field the checks read holds: mostly a value they look
// for, else anything.
func (g *gen) field() any {
	if g.r.IntN(10) < 6 {
		return meaningful[g.r.IntN(len(meaningful))]
	}
	return g.value(2)
}

// maybe returns m most of the time, else a value of any type in its place.
func (g *gen) maybe(m map[string]any) any {
	if g.r.IntN(8) == 0 {
		return g.value(2)
	}
	for k := range m {
		if g.r.IntN(4) == 0 {
			delete(m, k)
		}
	}
	return m
}

func (g *gen) conditions() any {
	if g.r.IntN(6) == 0 {
		return g.value(2)
	}
	list := make([]any, g.pick(0, 1, 2, 3, 5, 70, 200).(int))
	for i := range list {
		list[i] = g.maybe(map[string]any{"type": g.field(), "status": g.pick("True", "False", g.field()), "reason": g.field(), "message": g.field()})
	}
	return list
}

func (g *gen) object() map[string]any {
	status := map[string]any{"jobDeploymentStatus": g.field(), "jobStatus": g.field(), "reason": g.field(), "message": g.field(),
		"rayClusterName": g.field(), "state": g.field(), "conditions": g.conditions()}
	if g.r.IntN(4) == 0 { // a status as KubeRay writes them, for the successes
		status["jobDeploymentStatus"], status["jobStatus"] = g.pick("Complete", "Running", "Failed"), g.pick("SUCCEEDED", "RUNNING", "FAILED")
		status["state"] = g.pick("ready", "failed", "suspended")
	}
	return map[string]any{"apiVersion": "ray.io/v1", "kind": g.pick("RayJob", "RayCluster"),
		"metadata": g.maybe(map[string]any{"name": g.field(),
			"labels":      g.maybe(map[string]any{vocab.KueueQueueLabel: g.field(), "app": g.field()}),
			"annotations": g.maybe(map[string]any{stateKey: g.pick("stopped", "run", g.field())})}),
		"spec":   g.maybe(map[string]any{"suspend": g.pick(true, false, true, g.field())}),
		"status": g.maybe(status)}
}

// Thousands of generated objects through both checks, each under Argo
// CD's own budget; the generator reaches every verdict and both "stopped"
// and "queued" messages, so the invariants are not checked on easy cases
// only.
func TestArgoHealthGenerated(t *testing.T) {
	scripts := checks(t)
	g := &gen{r: rand.New(rand.NewPCG(5, 2026)), mib: strings.Repeat("x\x1b\n日", 64<<10/7)}
	seen := map[string]bool{}
	failures := 0
	for i := 0; i < 1500 && failures < 10; i++ {
		obj := g.object()
		for _, check := range []string{jobCheck, clusterCheck} {
			st, msg, err := judge(argohealth.Default, argohealth.Budget, scripts[check], check, obj)
			if err == nil {
				// the string library's way to the same words
				var openSt, openMsg string
				if openSt, openMsg, err = judge(argohealth.OpenLibs, argohealth.Budget, scripts[check], check, obj); err == nil && (openSt != st || openMsg != msg) {
					err = fmt.Errorf("with useOpenLibs %s %q, without %s %q", openSt, openMsg, st, msg)
				}
			}
			if err != nil {
				failures++
				b, _ := json.Marshal(obj)
				t.Errorf("case %d, %s: %v\nobject (first 2000 bytes): %.2000s", i, check, err, b)
				continue
			}
			seen[check+" "+st] = true
			seen[check+" stopped"] = seen[check+" stopped"] || strings.HasPrefix(msg, "stopped (state: stopped in Git)")
			seen[check+" queued"] = seen[check+" queued"] || strings.HasPrefix(msg, "queued by Kueue")
		}
	}
	for _, check := range []string{jobCheck, clusterCheck} {
		for _, want := range append(slices.Clone(verdicts), "stopped", "queued") {
			require.True(t, seen[check+" "+want], "no generated case gave %s %s", check, want)
		}
	}
}

// FuzzArgoHealth holds the same invariants on any JSON object.
func FuzzArgoHealth(f *testing.F) {
	g := &gen{r: rand.New(rand.NewPCG(7, 7)), mib: strings.Repeat("y\n", 1<<12)}
	for range 8 {
		b, err := json.Marshal(g.object())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	scripts := checks(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		for _, check := range []string{jobCheck, clusterCheck} {
			for _, sandbox := range sandboxes {
				if _, _, err := judge(sandbox, argohealth.Budget, scripts[check], check, obj); err != nil {
					t.Fatalf("%s, sandbox %d: %v", check, sandbox, err)
				}
			}
		}
	})
}
