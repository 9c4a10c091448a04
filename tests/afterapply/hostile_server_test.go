package afterapply

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// A cluster that answers strangely, as a compromised or broken API server
// (or a proxy in front of one) could: status and preflight refuse what
// they must not follow, tell refusals and failures from absence, bound what
// they read, and print the server's text as data.

// apiServer is a fake API server: answers by path (else an empty list),
// every request recorded.
type apiServer struct {
	mu      sync.Mutex
	seen    []*http.Request
	answers map[string]http.HandlerFunc
	// fallback answers a path without an answer (default: an empty list).
	fallback http.HandlerFunc
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Clone(r.Context()))
	h, ok := s.answers[r.URL.Path]
	fb := s.fallback
	s.mu.Unlock()
	switch {
	case ok:
		h(w, r)
	case fb != nil:
		fb(w, r)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`))
	}
}

func (s *apiServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

func jsonAnswer(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// fakeKubeconfig points at url with a bearer token.
func fakeKubeconfig(t *testing.T, url string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: kubeconfig-bearer-token}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ml}}]
current-context: c
`, url)), 0o600))
	return kc
}

func newAPIServer(t *testing.T, tls bool, s *apiServer) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(s)
	} else {
		srv = httptest.NewServer(s)
	}
	t.Cleanup(srv.Close)
	return srv
}

// noRawCommandLines: nothing the server sent starts a line of the output
// or reaches the terminal as an escape.
func noRawCommandLines(t *testing.T, what, out string) {
	t.Helper()
	require.NotContains(t, out, "\x1b", what)
	require.NotContains(t, out, "\u202e", what)
	require.NotContains(t, out, "\u200b", what)
	for _, l := range strings.Split(out, "\n") {
		require.False(t, strings.HasPrefix(strings.TrimLeft(l, " \t"), "::"), "%s: %q", what, l)
	}
}

func TestHostileAPIServer(t *testing.T) {
	t.Run("a redirect is never followed: to another host, or https to http", func(t *testing.T) {
		other := &apiServer{}
		otherSrv := newAPIServer(t, false, other)
		for _, tls := range []bool{false, true} {
			first := &apiServer{fallback: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, otherSrv.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}}
			srv := newAPIServer(t, tls, first)
			kc := fakeKubeconfig(t, srv.URL)
			for _, args := range [][]string{{"status", "run1"}, {"preflight", "-f", goodRender(t)}} {
				code, _, errs := clirun.Run(append(args, "--kubeconfig", kc)...)
				require.Equal(t, 2, code, errs)
				require.Contains(t, errs, "redirect refused: the API server answered GET")
				require.NotContains(t, errs, "kubeconfig-bearer-token")
			}
			require.NotEmpty(t, first.requests())
		}
		require.Empty(t, other.requests(), "the other host was never asked, so never saw the token")
	})

	t.Run("401 and 403 are refusals, not absence", func(t *testing.T) {
		for _, tc := range []struct {
			code int
			want string
		}{
			{401, "refused the kubeconfig's credentials (401 Unauthorized)"},
			{403, "cannot tell whether run run1 exists in namespace ml: the cluster refused to list"},
		} {
			s := &apiServer{fallback: jsonAnswer(tc.code, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"x","code":%d,"message":"no"}`, tc.code))}
			srv := newAPIServer(t, false, s)
			code, out, errs := clirun.Run("status", "run1", "--kubeconfig", fakeKubeconfig(t, srv.URL))
			require.Equal(t, 4, code, "%d: %s%s", tc.code, out, errs)
			require.Contains(t, errs, tc.want)
			require.NotContains(t, out, "not found")
		}
		// preflight: a 401 refuses every read alike, so nothing is "cannot tell".
		s := &apiServer{fallback: jsonAnswer(401, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`)}
		srv := newAPIServer(t, false, s)
		code, _, errs := clirun.Run("preflight", "-f", goodRender(t), "--kubeconfig", fakeKubeconfig(t, srv.URL))
		require.Equal(t, 4, code, errs)
		require.Contains(t, errs, "refused the kubeconfig's credentials (401 Unauthorized)")
	})

	t.Run("a 500 is a server error, its message escaped on stderr", func(t *testing.T) {
		msg := "boom\x1b]0;owned\x07\n::error::all clear\u202e"
		quoted, err := json.Marshal(msg)
		require.NoError(t, err)
		s := &apiServer{fallback: jsonAnswer(500, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500,"message":`+string(quoted)+`}`)}
		srv := newAPIServer(t, false, s)
		code, out, errs := clirun.Run("status", "run1", "--kubeconfig", fakeKubeconfig(t, srv.URL))
		require.Equal(t, 5, code, out+errs)
		require.Contains(t, errs, "API server error (500)")
		require.Contains(t, errs, `boom\x1b]0;owned\x07\n::error::all clear\u202e`, "the server's message, as data")
		noRawCommandLines(t, "stderr", errs)
	})

	t.Run("Events are read per object, paged and bounded", eventsPagedAndBounded)

	t.Run("--watch: a transient 503 is retried, --timeout ends with the last verdict", watchRetriesAndTimesOut)

	t.Run("namespaces and run names are checked before any request", func(t *testing.T) {
		s := &apiServer{}
		srv := newAPIServer(t, false, s)
		kc := fakeKubeconfig(t, srv.URL)
		for _, args := range [][]string{
			{"status", "run1", "-n", "../kube-system"}, {"status", "run1", "-n", "a/b"},
			{"status", "x,y"}, {"status", "a b"}, {"status", ""}, {"status", "run1=x"},
		} {
			code, _, errs := clirun.Run(append(args, "--kubeconfig", kc)...)
			require.Equal(t, 2, code, "%v: %s", args, errs)
			require.Contains(t, errs, "expected a")
		}
		require.Empty(t, s.requests())
	})

	t.Run("server text in every status field is escaped", statusFieldsEscaped)
}

// eventsPagedAndBounded: status lists Events per object, in pages of 500,
// reads one page, and refuses a server that ignores the limit.
func eventsPagedAndBounded(t *testing.T) {
	s := &apiServer{answers: map[string]http.HandlerFunc{
		"/apis/ray.io/v1/namespaces/ml/rayjobs": jsonAnswer(200, `{"kind":"RayJobList","apiVersion":"ray.io/v1","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"run1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"entrypoint":"x"}}]}`),
		"/api/v1/namespaces/ml/events": func(w http.ResponseWriter, r *http.Request) {
			// A namespace of many Events: pages of 500 with a continue token.
			var items []string
			for i := range 500 {
				items = append(items, fmt.Sprintf(`{"metadata":{"name":"e%d","namespace":"ml"},"involvedObject":{"kind":"RayJob","name":"run1"},"reason":"R","message":"m"}`, i))
			}
			jsonAnswer(200, `{"kind":"EventList","apiVersion":"v1","metadata":{"continue":"more"},"items":[`+strings.Join(items, ",")+`]}`)(w, r)
		},
	}}
	srv := newAPIServer(t, false, s)
	code, out, errs := clirun.Run("status", "run1", "--kubeconfig", fakeKubeconfig(t, srv.URL))
	require.Equal(t, 0, code, out+errs)
	require.Contains(t, out, "more than 500 Events about it; the first 500 were read")
	var events int
	for _, r := range s.requests() {
		q := r.URL.Query()
		require.Equal(t, "500", q.Get("limit"), "every list is paged: %s", r.URL)
		if strings.HasSuffix(r.URL.Path, "/events") {
			events++
			require.Equal(t, "involvedObject.name=run1", q.Get("fieldSelector"))
		}
	}
	require.Equal(t, 1, events, "one page of the object's events, then the bound")

	// A server that ignores limit is refused, not read whole.
	s.answers["/api/v1/namespaces/ml/events"] = func(w http.ResponseWriter, r *http.Request) {
		var items []string
		for i := range 600 {
			items = append(items, fmt.Sprintf(`{"metadata":{"name":"e%d"}}`, i))
		}
		jsonAnswer(200, `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[`+strings.Join(items, ",")+`]}`)(w, r)
	}
	code, _, errs = clirun.Run("status", "run1", "--kubeconfig", fakeKubeconfig(t, srv.URL))
	require.Equal(t, 5, code, errs)
	require.Contains(t, errs, "600 objects in one page, asked for at most 500")
}

// watchRetriesAndTimesOut: status --watch retries a transient 503, and a
// server hanging past --timeout ends it with the last verdict.
func watchRetriesAndTimesOut(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	s := &apiServer{answers: map[string]http.HandlerFunc{
		"/apis/ray.io/v1/namespaces/ml/rayjobs": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			polls++
			n := polls
			mu.Unlock()
			if n == 1 {
				jsonAnswer(503, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"etcd leader changed"}`)(w, r)
				return
			}
			jsonAnswer(200, `{"kind":"RayJobList","apiVersion":"ray.io/v1","metadata":{},"items":[]}`)(w, r)
		},
	}}
	srv := newAPIServer(t, false, s)
	kc := fakeKubeconfig(t, srv.URL)
	code, _, errs := clirun.Run("status", "run1", "--watch", "--interval", "50ms", "--kubeconfig", kc)
	require.Equal(t, 3, code, errs)
	require.Contains(t, errs, "poll 1 failed, retrying")

	// Progressing, then the server hangs past --timeout mid-poll.
	slow := &apiServer{answers: map[string]http.HandlerFunc{
		"/apis/ray.io/v1/namespaces/ml/rayjobs": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			polls++
			n := polls
			mu.Unlock()
			if n > 3 {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			jsonAnswer(200, `{"kind":"RayJobList","apiVersion":"ray.io/v1","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"run1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"entrypoint":"x"}}]}`)(w, r)
		},
	}}
	slowSrv := newAPIServer(t, false, slow)
	code, out, errs := clirun.Run("status", "run1", "--watch", "--interval", "50ms", "--timeout", "1s", "--kubeconfig", fakeKubeconfig(t, slowSrv.URL))
	require.Equal(t, 0, code, "the last verdict (progressing) decides\n%s%s", out, errs)
	require.Contains(t, errs, "the last state decides the exit code")
}

// statusFieldsEscaped: control characters and CI log commands in every
// status field the server sends reach the output escaped.
func statusFieldsEscaped(t *testing.T) {
	bad := "x\x1b[2J\n::error::forged\u202e\u200b"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	s := &apiServer{answers: map[string]http.HandlerFunc{
		"/apis/ray.io/v1/namespaces/ml/rayjobs":     jsonAnswer(200, `{"kind":"RayJobList","apiVersion":"ray.io/v1","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"run1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":`+q(bad)+`,"jobStatus":`+q(bad)+`}}]}`),
		"/apis/ray.io/v1/namespaces/ml/rayclusters": jsonAnswer(200, `{"kind":"RayClusterList","apiVersion":"ray.io/v1","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"c1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"headGroupSpec":{"template":{"spec":{"containers":[]}}}},"status":{"state":`+q(bad)+`}}]}`),
		"/api/v1/namespaces/ml/pods":                jsonAnswer(200, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1","ray.io/node-type":`+q(bad)+`,"ray.io/group":`+q(bad)+`}},"spec":{"containers":[]},"status":{"phase":`+q(bad)+`}}]}`),
		"/api/v1/namespaces/ml/services":            jsonAnswer(200, `{"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"s1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"type":`+q(bad)+`}}]}`),
	}}
	srv := newAPIServer(t, false, s)
	code, out, errs := clirun.Run("status", "run1", "--kubeconfig", fakeKubeconfig(t, srv.URL))
	require.NotEqual(t, 2, code, errs)
	noRawCommandLines(t, "stdout", out)
	noRawCommandLines(t, "stderr", errs)
	require.Contains(t, out, `x\x1b[2J\n::error::forged\u202e\u200b`)
}

// goodRender is the GB300 example rendered into namespace ml.
func goodRender(t *testing.T) string {
	t.Helper()
	f, _ := render(t, "ml", "run1")
	return f
}
