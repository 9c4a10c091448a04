package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// streamClient is the connection's client without a request timeout
// (http.Client.Timeout would end a followed log after it), with the same
// refusal of redirects.
func streamClient(cfg *rest.Config) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 0
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	hc.CheckRedirect = refuseRedirect
	return rest.UnversionedRESTClientForConfigAndClient(cfg, hc)
}

// ErrNoLog marks a Pod whose log cannot be read now: the Pod is gone, or
// its container has not started (400). It says nothing of the other Pods.
var ErrNoLog = errors.New("no log to read")

// PodLog GETs a Pod's log (pods/NAME/log with query: container, follow,
// tailLines, limitBytes) and returns its body to read as it comes. The
// answer's headers must come within the connection's timeout; the body
// is the caller's to bound (it may be followed for hours), and closing it
// ends the request. A refusal wraps ErrAccess, a Pod gone or a container
// not started ErrNoLog; a redirect is refused as every read's is.
func (c *Conn) PodLog(ctx context.Context, namespace, pod string, query url.Values) (io.ReadCloser, error) {
	path, err := Path(Pods, namespace, pod)
	if err != nil {
		return nil, err
	}
	path += "/log"
	req := c.stream.Get().AbsPath(path).SetHeader("Accept", "text/plain")
	for _, k := range slices.Sorted(maps.Keys(query)) {
		for _, v := range query[k] {
			req = req.Param(k, v)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(c.timeout, cancel)
	body, err := req.Stream(sctx)
	if !timer.Stop() && ctx.Err() == nil {
		cancel()
		if body != nil {
			_ = body.Close() // a read-only answer: nothing to flush
		}
		return nil, fmt.Errorf("%w: GET %s: no answer within %s", ErrUnreachable, path, c.timeout)
	}
	if err != nil {
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%w: Pod %s is gone: %w", ErrNoLog, pod, err)
		case apierrors.IsBadRequest(err):
			return nil, fmt.Errorf("%w: %w", ErrNoLog, err)
		}
		_, err = classify(err)
		return nil, err
	}
	return &cancelOnClose{ReadCloser: body, cancel: cancel}, nil
}

// cancelOnClose ends the request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
