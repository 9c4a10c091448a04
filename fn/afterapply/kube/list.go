package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// List reads the objects of a resource in a namespace matching a label
// selector ("" for all), page by page. An API the server does not serve is
// NotFound. At most MaxListItems objects are read: more is an error.
func (c *Conn) List(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) ([]unstructured.Unstructured, Outcome, error) {
	items, _, out, err := c.ListSome(ctx, gvr, namespace, ListOptions{LabelSelector: selector, Max: MaxListItems, Strict: true})
	return items, out, err
}

// MaxListItems bounds a List: one run's objects are at most a few thousand
// Pods.
const MaxListItems = 20000

// ListOptions select and bound a list.
type ListOptions struct {
	LabelSelector, FieldSelector string
	// Max is how many objects to read at most; Strict makes more an
	// error, else the list is cut and reported as more.
	Max    int
	Strict bool
}

// ListSome lists page by page (limit and continue) until Max objects are
// read; more reports whether the server had more. Only objects of the
// resource asked for are taken (any other is an ErrServer error), and only
// those the label selector matches: a server that ignores the selector
// puts no other run's objects in the answer. The list is bounded in pages
// and time too, not only in objects: a continue token that repeats, or
// that still comes after maxPages pages, or a list not done within
// ListTime is an ErrServer error, since it would never end.
func (c *Conn) ListSome(ctx context.Context, gvr schema.GroupVersionResource, namespace string, o ListOptions) (items []unstructured.Unstructured, more bool, out Outcome, err error) {
	sel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, false, NotFound, fmt.Errorf("listing %s: label selector %q: %w", gvr.Resource, o.LabelSelector, err)
	}
	q := url.Values{"limit": {fmt.Sprint(PageSize)}}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	lctx, cancel := context.WithTimeoutCause(ctx, c.listTime, errListTime)
	defer cancel()
	p := pager{gvr: gvr, max: o.Max, seen: map[string]bool{}}
	for {
		var l page
		if out, err := c.fetch(lctx, gvr, namespace, "", q, jsonOnly, p.decoder(&l)); out != Found {
			if ctx.Err() == nil && errors.Is(context.Cause(lctx), errListTime) {
				err = fmt.Errorf("%w: listing %s: %w after %d pages (%d objects)", ErrServer, gvr.Resource, errListTime, p.pages, len(items))
			}
			return nil, false, out, err
		}
		items = append(items, l.items...)
		next := l.next
		if len(items) >= o.Max && next != "" || len(items) > o.Max {
			if o.Strict {
				return nil, false, NotFound, fmt.Errorf("%w: listing %s: more than %d objects; expected a run's objects to be fewer", ErrServer, gvr.Resource, o.Max)
			}
			return matching(items[:min(len(items), o.Max)], sel), true, Found, nil
		}
		if next == "" {
			return matching(items, sel), false, Found, nil
		}
		if err := p.next(next, len(items)); err != nil {
			return nil, false, NotFound, err
		}
		q.Set("continue", next)
	}
}

// MaxClusterItems bounds a cluster-wide list read with Each (every Pod of
// a large cluster), MaxKindBytes what it reads: streamed, a page at a
// time, they bound the time and bytes of the read, not what is held.
const (
	MaxClusterItems = 200_000
	MaxKindBytes    = 512 << 20
)

// listTimeouts bounds one list, all its pages, to this many request
// timeouts (60 s by default): a server answering each page just within the
// request timeout must not hold the command for maxPages of them.
const listTimeouts = 4

var errListTime = errors.New("the list was not done in time")

// pager checks a list's pages as they come.
type pager struct {
	gvr   schema.GroupVersionResource
	max   int
	pages int
	seen  map[string]bool
}

// maxPages is how many pages a list of at most max objects takes, with
// room for a few short pages.
func (p *pager) maxPages() int { return p.max/PageSize + 4 }

// page is one answer to a list request.
type page struct {
	items []unstructured.Unstructured
	next  string
}

// decoder decodes a page and checks it: at most PageSize objects (a
// server that ignores limit answers with everything), each of the
// resource asked for. Each item is decoded once, as
// unstructured.UnstructuredList's decoder would give it (an item without
// apiVersion and kind takes the list's), but without also decoding the
// whole list into one map first, which doubled what a page costs.
func (p *pager) decoder(into *page) func([]byte) error {
	return func(body []byte) error {
		l, err := p.envelope(body)
		if err != nil {
			return err
		}
		into.next, into.items = l.Metadata.Continue, make([]unstructured.Unstructured, len(l.Items))
		for i, raw := range l.Items {
			u := &into.items[i]
			if err := utiljson.Unmarshal(raw, &u.Object); err != nil || u.Object == nil {
				return fmt.Errorf("listing %s: item %d is not an object", p.gvr.Resource, i)
			}
			l.Items[i] = nil // what is decoded need not be held twice
			if u.GetAPIVersion() == "" && u.GetKind() == "" {
				u.SetAPIVersion(l.APIVersion)
				u.SetKind(strings.TrimSuffix(l.Kind, "List"))
			}
			if err := isAsked(p.gvr, u, "", ""); err != nil {
				return badAnswer{fmt.Errorf("listing %s: item %d: %w", p.gvr.Resource, i, err)}
			}
		}
		return nil
	}
}

// listEnvelope is a list answer with its items undecoded.
type listEnvelope struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ListMeta   `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

// envelope decodes a page's list, its items left as JSON, and counts it:
// at most PageSize items.
func (p *pager) envelope(body []byte) (listEnvelope, error) {
	var l listEnvelope
	if err := json.Unmarshal(body, &l); err != nil {
		return l, err
	}
	p.pages++
	if len(l.Items) > PageSize {
		return l, badAnswer{fmt.Errorf("listing %s: %d objects in one page, asked for at most %d", p.gvr.Resource, len(l.Items), PageSize)}
	}
	return l, nil
}

// next accepts a page's continue token, or says why the list would never
// end: a token seen before, or still one after maxPages pages.
func (p *pager) next(token string, read int) error {
	if p.seen[token] {
		return fmt.Errorf("%w: listing %s: page %d's continue token repeats an earlier page's; a list that never ends", ErrServer, p.gvr.Resource, p.pages)
	}
	if p.pages >= p.maxPages() {
		return fmt.Errorf("%w: listing %s: still a continue token after %d pages (%d objects); expected at most %d objects in %d pages, a list that never ends", ErrServer, p.gvr.Resource, p.pages, read, p.max, p.maxPages())
	}
	p.seen[token] = true
	return nil
}

// matching keeps the objects whose labels the selector matches.
func matching(items []unstructured.Unstructured, sel labels.Selector) []unstructured.Unstructured {
	if sel.Empty() {
		return items
	}
	out := items[:0]
	for _, it := range items {
		if sel.Matches(labels.Set(it.GetLabels())) {
			out = append(out, it)
		}
	}
	return out
}
