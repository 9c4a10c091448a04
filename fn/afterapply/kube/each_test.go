package kube

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Each hands on every object of every page, at most most of them.
func TestEach(t *testing.T) {
	cases := []struct {
		name string
		most int
		want []string
		more bool
	}{
		{"all", 10, []string{"a", "b", "c"}, false},
		{"cut inside a page", 1, []string{"a"}, true},
		{"cut at a page's end", 2, []string{"a", "b"}, true},
		{"exactly all", 3, []string{"a", "b", "c"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){podsPath: podPages([]string{pod("a", ""), pod("b", "")}, []string{pod("c", "")})}}
			var got []string
			more, out, err := connect(t, f).Each(context.Background(), Pods, "ml", c.most, 1<<20, func(u *unstructured.Unstructured) { got = append(got, u.GetName()) })
			require.NoError(t, err)
			assert.Equal(t, Found, out)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.more, more)
		})
	}
}

// leanPod is the fields of a Pod a reader of names and labels reads.
type leanPod struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// EachAs hands on every object decoded into the lean type, kinded as the
// list's when it says no kind, at most most of them; an object with a
// field that does not decode is handed with its error; an object of
// another kind, or an item no object, fails the read.
func TestEachAs(t *testing.T) {
	cases := []struct {
		name  string
		pages [][]string
		most  int
		want  []string // name/kind, "!" after one handed with an error
		more  bool
		err   string
	}{
		{name: "all", pages: [][]string{{pod("a", "k=v"), pod("b", "")}, {pod("c", "")}}, most: 10, want: []string{"a/Pod k=v", "b/Pod", "c/Pod"}},
		{name: "cut inside a page", pages: [][]string{{pod("a", ""), pod("b", "")}, {pod("c", "")}}, most: 1, want: []string{"a/Pod"}, more: true},
		{name: "a field that does not decode", pages: [][]string{{`{"metadata":{"name":"a","labels":"x"}}`, pod("b", "")}}, most: 10, want: []string{"a/Pod!", "b/Pod"}},
		{name: "its own kind", pages: [][]string{{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`}}, most: 10, want: []string{"a/Pod"}},
		{name: "another kind", pages: [][]string{{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`}}, most: 10, err: `listing pods: item 0: expected pods of v1, found kind "Secret" of "v1"`},
		{name: "no object", pages: [][]string{{`"a"`}}, most: 10, err: "listing pods: item 0 is not an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeServer{answers: map[string]func(http.ResponseWriter, *http.Request){podsPath: podPages(c.pages...)}}
			var got []string
			more, out, err := EachAs(context.Background(), connect(t, f), Pods, "ml", c.most, 1<<20, func(p *leanPod, err error) {
				s := p.Metadata.Name + "/" + p.Kind
				for k, v := range p.Metadata.Labels {
					s += " " + k + "=" + v
				}
				if err != nil {
					s += "!"
				}
				got = append(got, s)
			})
			if c.err != "" {
				assert.NotEqual(t, Found, out)
				assert.ErrorContains(t, err, c.err)
				assert.Empty(t, got, "nothing of a page refused is handed on")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, Found, out)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.more, more)
		})
	}
}
