package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Round 5: status reads only what the run owns and its state from the
// spec, status without a run lists the namespace's runs, and logs reads
// the run's Pods' logs: each surface a table of hostile answers, the CLI
// run as a process (w.quick: bounded in memory and time, no secret out).

const (
	rayClustersPath = "/apis/ray.io/v1/namespaces/ml/rayclusters"
	runLabels       = `"app.kubernetes.io/managed-by":"nrl-k8s","app.kubernetes.io/part-of":"nemo-rl"`
)

// rayObject is a RayJob or RayCluster of run, with the owner reference
// ownerKind/ownerUID when set, and more top-level fields.
func rayObject(kind, name, uid, run, owner, more string) string {
	refs := ""
	if k, u, ok := strings.Cut(owner, "/"); ok {
		refs = fmt.Sprintf(`,"ownerReferences":[{"apiVersion":"ray.io/v1","kind":%q,"name":"o","uid":%q,"controller":true}]`, k, u)
	}
	return fmt.Sprintf(`{"apiVersion":"ray.io/v1","kind":%q,"metadata":{"name":%q,"namespace":"ml","uid":%q,"labels":{%s,"app.kubernetes.io/instance":%q},"annotations":{"nemo-rl.nvidia.com/state":"stopped"}%s}%s}`,
		kind, name, uid, runLabels, run, refs, more)
}

// ownedPod is a Pod of run owned by RayCluster uid cluster, of a role.
func ownedPod(name, run, cluster, role string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"ml","uid":"p-%s","labels":{"app.kubernetes.io/instance":%q,"ray.io/node-type":%q},"ownerReferences":[{"apiVersion":"ray.io/v1","kind":"RayCluster","name":"o","uid":%q,"controller":true}]},"spec":{"containers":[{"name":"ray","image":"i"}]},"status":{"phase":"Running"}}`,
		name, name, run, role, cluster)
}

func TestRound5StatusOwnership(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  map[string]http.HandlerFunc
		code     int
		says     []string
		never    []string
		verdict  string
		describe string
	}{
		{
			name: "a RayJob whose status names another run's RayCluster",
			answers: map[string]http.HandlerFunc{
				rayJobsPath:                 apiList("ray.io/v1", "RayJobList", rayObject("RayJob", "run1", "j1", "run1", "", `,"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Running","rayClusterName":"run2-c"}`)),
				rayClustersPath + "/run2-c": apiReply(200, rayObject("RayCluster", "run2-c", "c2", "run2", "RayJob/j2", `,"status":{"state":"ready"}`)),
				podsPath:                    apiList("v1", "PodList", ownedPod("run2-c-head", "run2", "c2", "head")),
			},
			verdict: "running", says: []string{"RayCluster run2-c named by RayJob run1 is not owned by it: ignored"},
			never: []string{"RayCluster run2-c: state", "run2-c-head ("},
		},
		{
			name: "a server that ignores the selector, with Pods labelled run1 owned by another cluster",
			answers: map[string]http.HandlerFunc{
				rayJobsPath:     apiList("ray.io/v1", "RayJobList", rayObject("RayJob", "run1", "j1", "run1", "", `,"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Running","rayClusterName":"run1-c"}`)),
				rayClustersPath: apiList("ray.io/v1", "RayClusterList", rayObject("RayCluster", "run1-c", "c1", "run1", "RayJob/j1", `,"status":{"state":"ready"}`), rayObject("RayCluster", "run2-c", "c2", "run2", "RayJob/j2", "")),
				podsPath:        apiList("v1", "PodList", ownedPod("run1-c-head", "run1", "c1", "head"), ownedPod("evil-head", "run1", "c2", "head"), ownedPod("run2-c-head", "run2", "c2", "head")),
			},
			verdict: "running", says: []string{"run1-c-head (head", "1 Pod(s) found as the run's are not its: evil-head"},
			never: []string{"evil-head (head", "run2-c-head"},
		},
		{
			name: "the stopped annotation on a Running RayJob is not trusted",
			answers: map[string]http.HandlerFunc{
				rayJobsPath: apiList("ray.io/v1", "RayJobList", rayObject("RayJob", "run1", "j1", "run1", "", `,"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Running","jobStatus":"RUNNING"}`)),
			},
			verdict: "running", says: []string{"RayJob run1 is Running (job RUNNING)"},
		},
		{
			name: "suspended in the spec, without a Kueue queue: stopped",
			answers: map[string]http.HandlerFunc{
				rayJobsPath: apiList("ray.io/v1", "RayJobList", strings.Replace(rayObject("RayJob", "run1", "j1", "run1", "", `,"spec":{"entrypoint":"x","suspend":true},"status":{"jobDeploymentStatus":"Suspended"}`), `"nemo-rl.nvidia.com/state":"stopped"`, `"nemo-rl.nvidia.com/state":"run"`, 1)),
			},
			verdict: "stopped", says: []string{"the run is stopped (suspended, no Kueue queue)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(&fakeAPI{answers: tc.answers})
			r := w.quick("status", "run1", "--kubeconfig", kc)
			require.Equal(t, 0, r.code, r.stdout+r.stderr)
			require.Contains(t, r.stdout, "run run1 in namespace ml: "+tc.verdict+"\n")
			for _, s := range tc.says {
				require.Contains(t, r.stdout, s)
			}
			for _, s := range tc.never {
				require.NotContains(t, r.stdout, s, "another run's object is never reported as this run's")
			}
		})
	}
}

// pagedClusters answers the RayCluster list with n runs' clusters, a page
// of limit at a time, as an API server pages.
func pagedClusters(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		to := min(from+limit, n)
		var items []string
		for i := from; i < to; i++ {
			items = append(items, rayObject("RayCluster", fmt.Sprintf("c%05d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("run-%05d", i), "", `,"status":{"state":"ready"}`))
		}
		next := ""
		if to < n {
			next = strconv.Itoa(to)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"RayClusterList","apiVersion":"ray.io/v1","metadata":{"continue":%q},"items":[%s]}`, next, strings.Join(items, ","))
	}
}

func TestRound5StatusListsRuns(t *testing.T) {
	escaped := strings.Replace(rayObject("RayJob", "x", "j1", "RUN", "", `,"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Running"}`), `"RUN"`, `"a\u001b]0;title\u0007\n::error::b"`, 1)
	for _, tc := range []struct {
		name    string
		answers map[string]http.HandlerFunc
		format  string
		code    int
		stdout  []string
		stderr  string
		lines   int
	}{
		{"escaped names", map[string]http.HandlerFunc{rayJobsPath: apiList("ray.io/v1", "RayJobList", escaped)}, "text", 0,
			[]string{`a\x1b]0;title\x07\n::error::b running: RayJob x is Running (job New)`}, "", 1},
		{"more runs than the cap", map[string]http.HandlerFunc{rayClustersPath: pagedClusters(1003)}, "text", 0,
			[]string{"run-00000 running: 1 RayCluster(s) ready\n", "run-00999 running"}, "more than 1000 runs in namespace ml; the first 1000 by name are listed", 1000},
		{"-o json is an array", map[string]http.HandlerFunc{rayClustersPath: pagedClusters(3)}, "json", 0,
			[]string{`"run": "run-00002"`, `"verdict": "running"`}, "", 0},
		{"no runs", map[string]http.HandlerFunc{}, "json", 0, []string{"[]\n"}, "no runs in namespace ml", 0},
		{"every list refused", map[string]http.HandlerFunc{}, "text", 4, nil, "cannot list the runs of namespace ml", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			c := &fakeAPI{answers: tc.answers}
			if tc.code == 4 {
				c.prefixes = map[string]http.HandlerFunc{"/apis/": apiStatus(403, "Forbidden"), "/api/": apiStatus(403, "Forbidden")}
			}
			r := w.quick("status", "-o", tc.format, "--kubeconfig", w.serve(c))
			require.Equal(t, tc.code, r.code, r.stdout+r.stderr)
			for _, s := range tc.stdout {
				require.Contains(t, r.stdout, s)
			}
			require.Contains(t, r.stderr, tc.stderr)
			if tc.format == "json" && tc.code == 0 {
				var runs []map[string]string
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
			}
			if tc.lines > 0 {
				require.Equal(t, tc.lines, strings.Count(r.stdout, "\n"), "one line per run")
			}
		})
	}
}

// logsAPI is run1's RayJob, its RayCluster c1 and head and worker Pods,
// with log answering every Pod's log.
func logsAPI(log http.HandlerFunc) *fakeAPI {
	return &fakeAPI{
		answers: map[string]http.HandlerFunc{
			rayJobsPath:     apiList("ray.io/v1", "RayJobList", rayObject("RayJob", "run1", "j1", "run1", "", `,"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Running","rayClusterName":"c1"}`)),
			rayClustersPath: apiList("ray.io/v1", "RayClusterList", rayObject("RayCluster", "c1", "c1", "run1", "RayJob/j1", "")),
			podsPath:        apiList("v1", "PodList", ownedPod("c1-head", "run1", "c1", "head"), ownedPod("c1-worker", "run1", "c1", "worker"), ownedPod("evil-head", "run1", "c9", "head")),
		},
		prefixes: map[string]http.HandlerFunc{podsPath + "/": log},
	}
}

func TestRound5Logs(t *testing.T) {
	var stolen atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer other.Close()
	drip := func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			_, _ = io.WriteString(w, "z")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, tc := range []struct {
		name   string
		log    http.HandlerFunc
		args   []string
		code   int
		stdout []string
		stderr string
		never  []string
	}{
		{"escapes and both roles, not another cluster's Pod", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "\x1b[2J\x1b]0;owned\x07hello\r\n::error::forged\n")
		}, nil, 0, []string{"[c1-head] \\x1b[2J\\x1b]0;owned\\x07hello\n", "[c1-head] ::error::forged\n", "[c1-worker] "}, "", []string{"evil-head", "\x1b"}},
		{"--role worker", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "x\n") },
			[]string{"--role", "worker"}, 0, []string{"[c1-worker] x\n"}, "", []string{"c1-head"}},
		{"a 20 MB line", func(w http.ResponseWriter, _ *http.Request) {
			chunk := strings.Repeat("h", 1<<20)
			for range 20 {
				_, _ = io.WriteString(w, chunk)
			}
			_, _ = io.WriteString(w, "\nafter\n")
		}, []string{"--role", "head"}, 0, []string{"[line cut at 16384 bytes]\n[c1-head] after\n"}, "", nil},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		},
			nil, 2, nil, "redirect refused", nil},
		{"403", apiStatus(403, "Forbidden"), nil, 4, nil, "needs get on pods/log in namespace ml", nil},
		{"401", apiStatus(401, "Unauthorized"), nil, 4, nil, "401 Unauthorized", nil},
		{"a slow drip", drip, []string{"--timeout", "2s"}, 5, nil, "the logs were not read within --timeout", nil},
		{"-f ends when the Pods go", func(w http.ResponseWriter, r *http.Request) {
			require.Equal(t, "true", r.URL.Query().Get("follow"))
			_, _ = io.WriteString(w, "last words\n")
		}, []string{"-f"}, 0, []string{"[c1-head] last words\n", "[c1-worker] last words\n"}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(logsAPI(tc.log))
			r := w.quick(append([]string{"logs", "run1", "--kubeconfig", kc}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stdout+r.stderr)
			for _, s := range tc.stdout {
				require.Contains(t, r.stdout, s)
			}
			require.Contains(t, r.stderr, tc.stderr)
			for _, s := range tc.never {
				require.NotContains(t, r.stdout, s)
			}
			require.NotContains(t, r.stdout+r.stderr, "kubeconfig-token")
		})
	}
	require.Zero(t, stolen.Load(), "the redirect's host was never asked")
}
