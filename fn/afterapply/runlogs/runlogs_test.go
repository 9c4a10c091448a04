package runlogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

const ns = "/namespaces/ml/"

// runCluster is run1: RayJob j1's RayCluster c1 with a head and a worker
// Pod, and another run's Pod labelled run1 (not owned by c1); logs
// answers each Pod's log path.
func runCluster(logs map[string]http.HandlerFunc) http.Handler {
	meta := func(name, uid, owner, nodeType string) string {
		return fmt.Sprintf(`"metadata":{"name":%q,"namespace":"ml","uid":%q,"labels":{"app.kubernetes.io/instance":"run1","ray.io/node-type":%q},"ownerReferences":[{"apiVersion":"ray.io/v1","kind":%q,"name":"x","uid":%q,"controller":true}]}`,
			name, uid, nodeType, strings.Split(owner, "/")[0], strings.Split(owner, "/")[1])
	}
	pod := func(name, owner, nodeType string) string {
		return `{"apiVersion":"v1","kind":"Pod",` + meta(name, "p-"+name, owner, nodeType) + `,"spec":{"containers":[{"name":"ray","image":"i"},{"name":"sidecar","image":"i"}]},"status":{"phase":"Running"}}`
	}
	answers := map[string]string{
		"/apis/ray.io/v1" + ns + "rayjobs":     `{"apiVersion":"ray.io/v1","kind":"RayJobList","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"run1","namespace":"ml","uid":"j1","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{},"status":{"rayClusterName":"c1"}}]}`,
		"/apis/ray.io/v1" + ns + "rayclusters": `{"apiVersion":"ray.io/v1","kind":"RayClusterList","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayCluster",` + meta("c1", "c1", "RayJob/j1", "") + `}]}`,
		"/api/v1" + ns + "pods": `{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[` + pod("c1-head", "RayCluster/c1", "head") + "," + pod("c1-worker", "RayCluster/c1", "worker") + "," +
			pod("other-head", "RayCluster/c9", "head") + `]}`,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := logs[r.URL.Path]; h != nil {
			h(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/log") {
			fmt.Fprintf(w, "log of %s\n", r.URL.Path)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		body, ok := answers[r.URL.Path]
		if !ok {
			w.WriteHeader(404)
			body = `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`
		}
		_, _ = io.WriteString(w, body)
	})
}

func logPath(pod string) string { return "/api/v1" + ns + "pods/" + pod + "/log" }

func connect(t *testing.T, h http.Handler) *kube.Conn {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL, BearerToken: "kubeconfig-token"}, "ml", kube.Options{Timeout: 2 * time.Second})
	require.NoError(t, err)
	return c
}

func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }
}

// Every case is read without --follow, within a time bound.
func TestPrint(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed: %s with %q", r.URL, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	huge := strings.Repeat("x", 3*MaxLineBytes)
	for _, tc := range []struct {
		name   string
		opts   Options
		logs   map[string]http.HandlerFunc
		out    string
		log    string
		err    error
		errHas string
	}{
		{name: "head and workers of the run's cluster, not another's Pod", opts: Options{Tail: -1},
			out: "[c1-head] log of " + logPath("c1-head") + "\n[c1-worker] log of " + logPath("c1-worker") + "\n"},
		{name: "--role head", opts: Options{Role: "head", Tail: -1}, out: "[c1-head] log of " + logPath("c1-head") + "\n"},
		{name: "the query: container, tail", opts: Options{Role: "worker", Container: "sidecar", Tail: 5},
			logs: map[string]http.HandlerFunc{logPath("c1-worker"): func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, r.URL.Query().Encode()+"\n")
			}},
			out: fmt.Sprintf("[c1-worker] container=sidecar&limitBytes=%d&tailLines=5\n", MaxBytes)},
		{name: "the first container by default", opts: Options{Role: "head", Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, r.URL.Query().Get("container")+"\n")
			}},
			out: "[c1-head] ray\n"},
		{name: "escapes and control characters", opts: Options{Role: "head", Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): text("\x1b[31mred\x1b[0m\r\n::error::forged\x07\nlast without newline")},
			out:  "[c1-head] \\x1b[31mred\\x1b[0m\n[c1-head] ::error::forged\\x07\n[c1-head] last without newline\n"},
		{name: "a huge line is cut, the next kept", opts: Options{Role: "head", Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): text(huge + "\nnext\n")},
			out:  "[c1-head] " + huge[:MaxLineBytes] + fmt.Sprintf(" [line cut at %d bytes]\n", MaxLineBytes) + "[c1-head] next\n"},
		{name: "a redirect is refused", opts: Options{Role: "head", Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
			}},
			err: kube.ErrRedirect},
		{name: "403 names the access", opts: Options{Role: "head", Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(403)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods \"c1-head\" is forbidden"}`)
			}},
			err: kube.ErrAccess, errHas: "needs get on pods/log in namespace ml"},
		{name: "a container not started is said, the others read", opts: Options{Tail: -1},
			logs: map[string]http.HandlerFunc{logPath("c1-head"): func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"container \"ray\" is waiting to start\u001b[2J"}`)
			}},
			out: "[c1-worker] log of " + logPath("c1-worker") + "\n", log: `is waiting to start\x1b[2J`},
		{name: "no Pods of the role", opts: Options{Role: "worker", Tail: -1},
			logs: map[string]http.HandlerFunc{"/api/v1" + ns + "pods": text(`{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[]}`)},
			err:  ErrNoPods},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, log bytes.Buffer
			o := tc.opts
			o.Namespace, o.Run, o.Out, o.Log = "ml", "run1", &out, &log
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Print(ctx, connect(t, runCluster(tc.logs)), o)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Contains(t, err.Error(), tc.errHas)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.out, out.String())
			assert.Contains(t, log.String(), tc.log)
		})
	}
}

// A server that drips a log byte by byte, or sends one without end: the
// time bound ends a read without --follow, the byte bound ends it too,
// and what is held stays a line's worth.
func TestPrintIsBounded(t *testing.T) {
	drip := func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := io.WriteString(w, "a"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	endless := func(w http.ResponseWriter, r *http.Request) {
		line := strings.Repeat("y", 1023) + "\n"
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
	}
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		err  bool
	}{{"slow drip", drip, true}, {"without end", endless, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var out, log bytes.Buffer
			ctx, cancel := context.WithTimeoutCause(context.Background(), 2*time.Second, errors.New("time bound"))
			defer cancel()
			start := time.Now()
			err := Print(ctx, connect(t, runCluster(map[string]http.HandlerFunc{logPath("c1-head"): tc.h})),
				Options{Namespace: "ml", Run: "run1", Role: "head", Tail: -1, Out: &out, Log: &log, MaxBytes: 1 << 20})
			assert.Less(t, time.Since(start), 5*time.Second)
			if tc.err {
				require.ErrorContains(t, err, "time bound")
				return
			}
			require.NoError(t, err)
			assert.LessOrEqual(t, out.Len(), 1<<20+(1<<20)/50, "the byte bound, with the prefixes")
			assert.Greater(t, out.Len(), 1<<20-2048)
			assert.Contains(t, log.String(), "stopped after 1048576 bytes of logs")
		})
	}
}

// --follow streams every Pod at once and ends cleanly when the Pods'
// logs end (the Pods went) or when interrupted.
func TestFollow(t *testing.T) {
	var streams atomic.Int32
	hold := func(w http.ResponseWriter, r *http.Request) {
		streams.Add(1)
		assert.Equal(t, "true", r.URL.Query().Get("follow"))
		assert.Empty(t, r.URL.Query().Get("limitBytes"))
		_, _ = io.WriteString(w, "started\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	gone := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "bye\n") }
	t.Run("the Pods go", func(t *testing.T) {
		var out, log bytes.Buffer
		err := Print(context.Background(), connect(t, runCluster(map[string]http.HandlerFunc{logPath("c1-head"): gone, logPath("c1-worker"): gone})),
			Options{Namespace: "ml", Run: "run1", Tail: -1, Follow: true, Out: &out, Log: &log})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"[c1-head] bye", "[c1-worker] bye"}, strings.Split(strings.TrimSpace(out.String()), "\n"))
	})
	t.Run("interrupted", func(t *testing.T) {
		var out lockedBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			done <- Print(ctx, connect(t, runCluster(map[string]http.HandlerFunc{logPath("c1-head"): hold, logPath("c1-worker"): hold})),
				Options{Namespace: "ml", Run: "run1", Tail: 10, Follow: true, Out: &out, Log: io.Discard})
		}()
		require.Eventually(t, func() bool { return strings.Count(out.String(), "started") == 2 }, 5*time.Second, 10*time.Millisecond, "both Pods streamed at once, past the request timeout")
		time.Sleep(2500 * time.Millisecond) // past the connection's 2 s request timeout: a stream has none
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("follow did not end when interrupted")
		}
		assert.Equal(t, int32(2), streams.Load())
	})
}

type lockedBuffer struct {
	mu atomic.Pointer[string]
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	for {
		old := b.mu.Load()
		s := string(p)
		if old != nil {
			s = *old + s
		}
		if b.mu.CompareAndSwap(old, &s) {
			return len(p), nil
		}
	}
}

func (b *lockedBuffer) String() string {
	if s := b.mu.Load(); s != nil {
		return *s
	}
	return ""
}
