package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	schedkueue "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
)

// fakeServer answers the paths the tests ask for, behind a proxy prefix
// (as Rancher-style kubeconfigs put one), and records each request.
type fakeServer struct {
	answers map[string]func(w http.ResponseWriter, r *http.Request)
	seen    []*http.Request
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.seen = append(f.seen, r)
	if h, ok := f.answers[r.URL.Path]; ok {
		h(w, r)
		return
	}
	http.Error(w, "404 page not found", http.StatusNotFound)
}

func answer(code int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func connect(t *testing.T, f *fakeServer) *Conn {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := FromConfig(&rest.Config{Host: srv.URL + "/proxy/c1"}, "", Options{UserAgent: "nrl-k8s-test"})
	require.NoError(t, err)
	assert.Equal(t, "default", c.Namespace)
	return c
}

func TestGetReadsTheObjectBehindTheServersPath(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/apis/ray.io/v1/namespaces/ml/rayjobs/run1": answer(200, `{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"run1","namespace":"ml"},"status":{"jobStatus":"RUNNING"}}`),
	}}
	c := connect(t, f)
	u, out, err := c.Get(context.Background(), RayJobs, "ml", "run1")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	assert.Equal(t, "RUNNING", u.Object["status"].(map[string]any)["jobStatus"])
	require.Len(t, f.seen, 1)
	assert.Equal(t, "application/json", f.seen[0].Header.Get("Accept"))
	assert.Equal(t, "nrl-k8s-test", f.seen[0].Header.Get("User-Agent"))
}

func TestErrorAnswersAreClassifiedAsClientGoWould(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/api/v1/namespaces/ml/serviceaccounts/gone": answer(404, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"serviceaccounts \"gone\" not found"}`),
		"/proxy/c1/api/v1/namespaces/ml/serviceaccounts/rbac": answer(403, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden: User \"bob\" cannot get"}`),
		"/proxy/c1/api/v1/namespaces/ml/serviceaccounts/boom": answer(500, `internal error`),
		"/proxy/c1/api/v1/namespaces/ml/serviceaccounts/junk": answer(200, `{not json`),
	}}
	c := connect(t, f)
	ctx := context.Background()

	_, out, err := c.Get(ctx, ServiceAccounts, "ml", "gone")
	assert.NoError(t, err)
	assert.Equal(t, NotFound, out)

	_, out, err = c.Get(ctx, ServiceAccounts, "ml", "rbac")
	assert.Equal(t, Forbidden, out)
	assert.ErrorContains(t, err, `cannot get`)
	assert.ErrorIs(t, err, ErrAccess)
	assert.False(t, Stops(err))

	// No Status in the answer: the code decides, as client-go's generic response.
	_, out, err = c.Get(ctx, ServiceAccounts, "ml", "boom")
	assert.Equal(t, NotFound, out)
	assert.ErrorIs(t, err, ErrServer)
	assert.True(t, Stops(err))

	_, _, err = c.Get(ctx, ServiceAccounts, "ml", "junk")
	assert.ErrorIs(t, err, ErrUnreachable)

	// An API path the server does not serve at all (plain-text 404).
	_, out, err = c.Get(ctx, ComputeDomains, "ml", "cd")
	assert.NoError(t, err)
	assert.Equal(t, NotFound, out)
}

func TestGetMetadataAsksForMetadataAloneAndRefusesAWholeObject(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/api/v1/namespaces/ml/secrets/wandb": answer(200, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"wandb","namespace":"ml","uid":"u1"}}`),
		// A server (or proxy) that ignores the request and sends the Secret.
		"/proxy/c1/api/v1/namespaces/ml/secrets/whole": answer(200, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"whole"},"data":{"key":"c2VjcmV0"}}`),
		// Another Secret's metadata: it says nothing of this one.
		"/proxy/c1/api/v1/namespaces/ml/secrets/gone": answer(200, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"wandb","namespace":"ml"}}`),
	}}
	c := connect(t, f)
	m, out, err := c.GetMetadata(context.Background(), Secrets, "ml", "wandb")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	assert.Equal(t, "wandb", m.Name)
	assert.Empty(t, m.Kind)
	assert.Equal(t, metadataOnly, f.seen[0].Header.Get("Accept"))
	assert.NotContains(t, f.seen[0].Header.Get("Accept"), ",", "no fallback to the whole object")

	m, _, err = c.GetMetadata(context.Background(), Secrets, "ml", "whole")
	assert.Nil(t, m)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.ErrorContains(t, err, `found kind "Secret"`)
	assert.NotContains(t, err.Error(), "c2VjcmV0")

	_, _, err = c.GetMetadata(context.Background(), Secrets, "ml", "gone")
	assert.ErrorIs(t, err, ErrServer)
	assert.ErrorContains(t, err, `expected secrets gone, found "wandb"`)
}

func TestServedReadsDiscovery(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/apis/ray.io/v1": answer(200, `{"kind":"APIResourceList","groupVersion":"ray.io/v1","resources":[{"name":"rayjobs"},{"name":"rayclusters"}]}`),
	}}
	c := connect(t, f)
	got, out, err := c.Served(context.Background(), "ray.io/v1")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	assert.Equal(t, map[string]bool{"rayjobs": true, "rayclusters": true}, got)

	_, out, err = c.Served(context.Background(), "scheduling.run.ai/v2")
	assert.NoError(t, err)
	assert.Equal(t, NotFound, out)

	// Another group's document does not say what this group serves.
	f.answers["/proxy/c1/apis/kueue.x-k8s.io/v1beta2"] = answer(200, `{"kind":"APIResourceList","groupVersion":"ray.io/v1","resources":[{"name":"localqueues"}]}`)
	_, _, err = c.Served(context.Background(), "kueue.x-k8s.io/v1beta2")
	assert.ErrorIs(t, err, ErrServer)
}

func TestNamesThatAreNotOnePathSegmentAreRefusedUnsent(t *testing.T) {
	f := &fakeServer{}
	c := connect(t, f)
	for _, tc := range []struct{ ns, name string }{{"ml", "../../../api/v1/secrets"}, {"..", "x"}, {"ml", "a/b"}, {"ml/x", "a"}} {
		_, _, err := c.Get(context.Background(), ConfigMaps, tc.ns, tc.name)
		require.Error(t, err, "%q/%q", tc.ns, tc.name)
		assert.False(t, errors.Is(err, ErrUnreachable))
		assert.True(t, strings.HasPrefix(err.Error(), "configmaps "), err.Error())
	}
	assert.Empty(t, f.seen, "nothing was sent")
}

// An API server whose storage is still initialising answers 429 with
// Retry-After (as the real one did in tests/afterapply): the read waits and
// asks again, as client-go's clients do.
func TestAnAnswerAskingToRetryIsRetried(t *testing.T) {
	calls := 0
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/api/v1/namespaces/ml/configmaps/cfg": func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls == 1 {
				w.Header().Set("Retry-After", "1")
				answer(429, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"storage is (re)initializing"}`)(w, r)
				return
			}
			answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"}}`)(w, r)
		},
	}}
	c := connect(t, f)
	u, out, err := c.Get(context.Background(), ConfigMaps, "ml", "cfg")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	assert.Equal(t, "cfg", u.GetName())
	assert.Equal(t, 2, calls)
}

// An answer of another kind, group or object than asked is an ErrServer
// error, never used (lists: list_test.go).
func TestAnswersOfAnotherKindAreRefused(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){
		"/proxy/c1/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq":             answer(200, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cq"}}`),
		"/proxy/c1/apis/kueue.x-k8s.io/v1beta2/clusterqueues/other":          answer(200, `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq"}}`),
		"/proxy/c1/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/lq": answer(200, `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq","namespace":"other"}}`),
	}}
	c := connect(t, f)
	ctx := context.Background()
	_, _, err := c.Get(ctx, schedkueue.ClusterQueues, "", "cq")
	require.ErrorIs(t, err, ErrServer)
	assert.ErrorContains(t, err, `found kind "ConfigMap"`)
	_, _, err = c.Get(ctx, schedkueue.ClusterQueues, "", "other")
	require.ErrorIs(t, err, ErrServer)
	assert.ErrorContains(t, err, `expected clusterqueues other, found ClusterQueue "cq"`)
	_, _, err = c.Get(ctx, schedkueue.LocalQueues, "ml", "lq")
	require.ErrorIs(t, err, ErrServer)
}

// A budget bounds every answer read through the connection together.
func TestBudgetBoundsEveryAnswerTogether(t *testing.T) {
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"ml"},"data":{"a":"` + strings.Repeat("x", 500) + `"}}`
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){"/proxy/c1/api/v1/namespaces/ml/configmaps/cfg": answer(200, body)}}
	c := connect(t, f).Budgeted(int64(len(body)) + 100)
	_, out, err := c.Get(context.Background(), ConfigMaps, "ml", "cfg")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	_, _, err = c.Get(context.Background(), ConfigMaps, "ml", "cfg")
	require.ErrorIs(t, err, ErrServer)
	assert.ErrorContains(t, err, "the answers to this command are over")
	assert.NotErrorIs(t, err, ErrUnreachable)
}
