package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	schedkai "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kai"
	schedkueue "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
)

const podsPath = "/proxy/c1/api/v1/namespaces/ml/pods"

// pod is a list item: a Pod named name with labels "k=v,...".
func pod(name, labels string) string {
	var ls []string
	for _, kv := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			ls = append(ls, fmt.Sprintf("%q:%q", k, v))
		}
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"labels":{%s}}}`, name, strings.Join(ls, ","))
}

// podPages answers a PodList page by page: page i+1 is asked for with
// continue "p<i+1>", every page but the last gives the next token.
func podPages(pages ...[]string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if c := r.URL.Query().Get("continue"); c != "" {
			_, _ = fmt.Sscanf(c, "p%d", &i)
		}
		next := ""
		if i+1 < len(pages) {
			next = fmt.Sprintf("p%d", i+1)
		}
		answer(200, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"`+next+`"},"items":[`+strings.Join(pages[i], ",")+`]}`)(w, r)
	}
}

func names(items []unstructured.Unstructured) []string {
	var out []string
	for _, u := range items {
		out = append(out, u.GetName())
	}
	return out
}

// A list is read page by page, its items kinded as the list's and kept
// only when the label selector matches them (a server may ignore it); Max
// bounds it: cut and reported as more, or, strict, an error. An answer of
// another kind than asked, a page beyond PageSize or an item no object is
// never used.
func TestListSome(t *testing.T) {
	many := make([]string, PageSize+1)
	for i := range many {
		many[i] = pod(fmt.Sprint("p", i), "")
	}
	cases := []struct {
		name    string
		path    string
		answer  func(http.ResponseWriter, *http.Request)
		call    func(c *Conn) ([]unstructured.Unstructured, bool, error)
		want    []string
		more    bool
		err     string
		queries []string // the requests' queries, in order; nil: not checked
	}{
		{"one page", podsPath, podPages([]string{pod("a", "i=r"), pod("b", "i=r")}),
			listSome(Pods, ListOptions{LabelSelector: "i=r", FieldSelector: "spec.nodeName=n", Max: 10}), []string{"a", "b"}, false, "",
			[]string{"fieldSelector=spec.nodeName%3Dn&labelSelector=i%3Dr&limit=500"}},
		{"pages joined", podsPath, podPages([]string{pod("a", "")}, []string{pod("b", "")}),
			listSome(Pods, ListOptions{Max: 10}), []string{"a", "b"}, false, "", []string{"limit=500", "continue=p1&limit=500"}},
		{"what the selector does not match is dropped", "/proxy/c1/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads",
			answer(200, `{"kind":"WorkloadList","apiVersion":"kueue.x-k8s.io/v1beta2","metadata":{},"items":[
			{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"mine","labels":{"kueue.x-k8s.io/job-uid":"u-1"}}},
			{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"other","labels":{"kueue.x-k8s.io/job-uid":"u-2"}}},
			{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"unlabelled"}}]}`),
			listSome(schedkueue.Workloads, ListOptions{LabelSelector: "kueue.x-k8s.io/job-uid in (u-1,u-3)", Max: 10}), []string{"mine"}, false, "", nil},
		{"exactly Max", podsPath, podPages([]string{pod("a", ""), pod("b", "")}),
			listSome(Pods, ListOptions{Max: 2}), []string{"a", "b"}, false, "", nil},
		{"Max cuts a longer list", podsPath, podPages([]string{pod("a", ""), pod("b", "")}, []string{pod("c", "")}),
			listSome(Pods, ListOptions{Max: 1}), []string{"a"}, true, "", []string{"limit=500"}},
		{"more than Max, strict", podsPath, podPages([]string{pod("a", ""), pod("b", "")}),
			listSome(Pods, ListOptions{Max: 1, Strict: true}), nil, false, "listing pods: more than 1 objects; expected a run's objects to be fewer", nil},
		{"another kind", "/proxy/c1/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads",
			answer(200, `{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"s"},"data":{"k":"c2VjcmV0"}}]}`),
			listSome(schedkueue.Workloads, ListOptions{Max: 10}), nil, false, `expected workloads of kueue.x-k8s.io/v1beta2, found kind "Secret" of "v1"`, nil},
		{"an item of another kind", "/proxy/c1/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups",
			answer(200, `{"kind":"PodGroupList","apiVersion":"scheduling.run.ai/v2alpha2","metadata":{},"items":[{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j"}}]}`),
			listSome(schedkai.PodGroups, ListOptions{Max: 10}), nil, false, `listing podgroups: item 0: expected podgroups of scheduling.run.ai/v2alpha2, found kind "RayJob"`, nil},
		{"a page beyond PageSize", podsPath, podPages(many),
			listSome(Pods, ListOptions{Max: 10000}), nil, false, "listing pods: 501 objects in one page, asked for at most 500", nil},
		{"an item no object", podsPath, answer(200, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[1]}`),
			listSome(Pods, ListOptions{Max: 10}), nil, false, "listing pods: item 0 is not an object", nil},
		{"a bad selector is not sent", podsPath, podPages(),
			listSome(Pods, ListOptions{LabelSelector: "a in (", Max: 10}), nil, false, `listing pods: label selector "a in ("`, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){c.path: c.answer}}
			items, more, err := c.call(connect(t, f))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				assert.NotContains(t, err.Error(), "c2VjcmV0", "an answer's data is never echoed")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.want, names(items))
			assert.Equal(t, c.more, more)
			if c.queries != nil {
				got := []string{}
				for _, r := range f.seen {
					q := r.URL.Query()
					q.Del("timeout") // the client's own
					got = append(got, q.Encode())
				}
				assert.Equal(t, c.queries, got)
			}
		})
	}
}

// listSome is ListSome in the namespace ml, as a case calls it.
func listSome(gvr schema.GroupVersionResource, o ListOptions) func(*Conn) ([]unstructured.Unstructured, bool, error) {
	return func(c *Conn) ([]unstructured.Unstructured, bool, error) {
		items, more, _, err := c.ListSome(context.Background(), gvr, "ml", o)
		return items, more, err
	}
}

// List's items take the list's kind, as client-go's decoder gives them,
// and its selector is sent.
func TestListKindsTheItems(t *testing.T) {
	f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){podsPath: podPages([]string{pod("a", "i=r"), pod("b", "i=r")})}}
	items, out, err := connect(t, f).List(context.Background(), Pods, "ml", "i=r")
	require.NoError(t, err)
	assert.Equal(t, Found, out)
	assert.Equal(t, []string{"Pod", "Pod"}, []string{items[0].GetKind(), items[1].GetKind()})
	assert.Equal(t, "i=r", f.seen[0].URL.Query().Get("labelSelector"))
}

// A list ends in pages and in time whatever the server's continue tokens:
// a new one every page, the same one again, or pages that come slowly.
func TestListsEndInPagesAndTime(t *testing.T) {
	pages := 0
	token := func(same bool, delay time.Duration) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			pages++
			time.Sleep(delay)
			next := fmt.Sprintf("t%d", pages)
			if same {
				next = "again"
			}
			answer(200, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"`+next+`"},"items":[{"metadata":{"name":"p","labels":{"a":"b"}}}]}`)(w, r)
		}
	}
	for _, tc := range []struct {
		name  string
		same  bool
		delay time.Duration
		want  string
		pages int
	}{
		{"new token every page", false, 0, "still a continue token after 44 pages", 44},
		{"the same token again", true, 0, "page 2's continue token repeats an earlier page's", 2},
		{"slow pages", false, 100 * time.Millisecond, "the list was not done in time", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pages = 0
			f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){podsPath: token(tc.same, tc.delay)}}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			c, err := FromConfig(&rest.Config{Host: srv.URL + "/proxy/c1"}, "", Options{Timeout: 200 * time.Millisecond})
			require.NoError(t, err)
			_, _, err = c.List(context.Background(), Pods, "ml", "a=b")
			require.ErrorIs(t, err, ErrServer)
			assert.ErrorContains(t, err, tc.want)
			if tc.pages > 0 {
				assert.Equal(t, tc.pages, pages)
			} else {
				assert.Less(t, pages, 44)
			}
		})
	}
}
