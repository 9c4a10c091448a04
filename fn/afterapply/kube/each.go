package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	goruntime "runtime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Each lists a resource page by page like ListSome, all of it, handing
// each object to fn as its page is read and keeping none, with a budget
// of bytes of its own: a cluster-wide list (every Pod, every Node of a
// thousand-node cluster) is held a page at a time and does not take the
// report's budget (MaxReportBytes), which bounds what a report holds. At
// most most objects are handed to fn; more reports whether the server had
// more. Pages, continue tokens and time are bounded as ListSome's are.
func (c *Conn) Each(ctx context.Context, gvr schema.GroupVersionResource, namespace string, most int, bytes int64, fn func(*unstructured.Unstructured)) (more bool, out Outcome, err error) {
	var l page
	return c.walk(ctx, gvr, namespace, most, bytes, pages{
		decoder: func(p *pager) func([]byte) error { return p.decoder(&l) },
		next:    func() string { return l.next },
		len:     func() int { return len(l.items) },
		hand: func(i int) {
			fn(&l.items[i])
			l.items[i].Object = nil // handed on: not held with the page
		},
		drop: func() { l = page{} },
	})
}

// Typed is a lean type of a kind's objects: a struct with the JSON
// fields its reader reads and metav1.TypeMeta inline (its
// GetObjectKind), whose apiVersion and kind are checked.
type Typed[T any] interface {
	*T
	GetObjectKind() schema.ObjectKind
}

// EachAs is Each for a reader of a few fields of large objects (every
// Node's, every ResourceSlice's): each object's JSON is decoded straight
// into a new T, only the fields T has (the rest are skipped, never built
// as a map), and handed to fn with the error of a field that does not
// decode (the rest of it decoded as far as it could be).
func EachAs[T any, PT Typed[T]](ctx context.Context, c *Conn, gvr schema.GroupVersionResource, namespace string, most int, maxBytes int64, fn func(PT, error)) (more bool, out Outcome, err error) {
	var (
		items []T
		errs  []error
		next  string
	)
	return c.walk(ctx, gvr, namespace, most, maxBytes, pages{
		decoder: func(p *pager) func([]byte) error {
			return func(body []byte) error {
				l, err := p.envelope(body)
				if err != nil {
					return err
				}
				next, items, errs = l.Metadata.Continue, make([]T, len(l.Items)), make([]error, len(l.Items))
				for i, raw := range l.Items {
					if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
						return fmt.Errorf("listing %s: item %d is not an object", p.gvr.Resource, i)
					}
					o := PT(&items[i])
					errs[i] = utiljson.Unmarshal(raw, o)
					l.Items[i] = nil
					tm, ok := o.GetObjectKind().(*metav1.TypeMeta)
					if !ok {
						return fmt.Errorf("listing %s: %T has no metav1.TypeMeta", p.gvr.Resource, o)
					}
					if tm.APIVersion == "" && tm.Kind == "" {
						tm.APIVersion, tm.Kind = l.APIVersion, strings.TrimSuffix(l.Kind, "List")
					}
					if err := isKind(p.gvr, tm.GroupVersionKind(), tm.APIVersion); err != nil {
						return badAnswer{fmt.Errorf("listing %s: item %d: %w", p.gvr.Resource, i, err)}
					}
				}
				return nil
			}
		},
		next: func() string { return next },
		len:  func() int { return len(items) },
		hand: func(i int) {
			fn(PT(&items[i]), errs[i])
			var zero T
			items[i] = zero // handed on: not held with the page
		},
		drop: func() { items, errs = nil, nil },
	})
}

// pages is how walk reads one kind of page: the decoder of a page's
// answer, its continue token and number of objects, handing one on, and
// dropping the page.
type pages struct {
	decoder func(*pager) func([]byte) error
	next    func() string
	len     func() int
	hand    func(int)
	drop    func()
}

// walk is Each's read, the pages decoded as pg says.
func (c *Conn) walk(ctx context.Context, gvr schema.GroupVersionResource, namespace string, most int, bytes int64, pg pages) (more bool, out Outcome, err error) {
	own := c.Budgeted(bytes)
	q := url.Values{"limit": {fmt.Sprint(PageSize)}}
	lctx, cancel := context.WithTimeoutCause(ctx, c.listTime, errListTime)
	defer cancel()
	p := pager{gvr: gvr, max: most, seen: map[string]bool{}}
	read := 0
	for {
		if out, err := own.fetch(lctx, gvr, namespace, "", q, jsonOnly, pg.decoder(&p)); out != Found {
			if ctx.Err() == nil && errors.Is(context.Cause(lctx), errListTime) {
				err = fmt.Errorf("%w: listing %s: %w after %d pages (%d objects)", ErrServer, gvr.Resource, errListTime, p.pages, read)
			}
			return false, out, err
		}
		for i := range pg.len() {
			if read == most {
				return true, Found, nil
			}
			pg.hand(i)
			read++
		}
		next := pg.next()
		switch {
		case next == "":
			return false, Found, nil
		case read >= most:
			return true, Found, nil
		}
		if err := p.next(next, read); err != nil {
			return false, NotFound, err
		}
		q.Set("continue", next)
		// A page decodes to several times its size, and a cluster-wide
		// list has hundreds: collected before the next is read, the
		// command holds one page's worth at its peak, not three.
		pg.drop()
		goruntime.GC()
	}
}
