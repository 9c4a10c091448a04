package preflight

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// reader is the connection as the scheduler integrations read it
// (scheduler.Reader): what they ask of the cluster for preflight goes
// through it, so they link no client; the Nodes come from the
// preflight's cache, read once for every line.
type reader struct {
	c *kube.Conn
	k *cache
}

func (r reader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, scheduler.Outcome, error) {
	u, out, err := r.c.Get(ctx, gvr, ns, name)
	return u, outcome(out), err
}

func (r reader) List(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]unstructured.Unstructured, scheduler.Outcome, error) {
	items, out, err := r.c.List(ctx, gvr, ns, selector)
	return items, outcome(out), err
}

// Exists reads the object as metadata only (kube.Conn.GetMetadata): a
// Secret's data never reaches this process.
func (r reader) Exists(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (scheduler.Outcome, error) {
	_, out, err := r.c.GetMetadata(ctx, gvr, ns, name)
	return outcome(out), err
}

// BoundPods is what the bound Pods hold, from preflight's one walk of
// the Pods.
func (r reader) BoundPods(ctx context.Context) (scheduler.BoundPods, scheduler.Outcome, error) {
	p := r.k.podsOf(ctx, r.c)
	return p.bound, outcome(p.out), p.err
}

func (r reader) Nodes(ctx context.Context) ([]*corev1.Node, scheduler.Outcome, error) {
	l := r.k.nodesOf(ctx, r.c)
	return l.nodes, outcome(l.out), l.err
}

func (reader) Stops(err error) bool { return kube.Stops(err) }

// outcome is a read's outcome in the integrations' terms.
func outcome(out kube.Outcome) scheduler.Outcome {
	switch out {
	case kube.Found:
		return scheduler.Found
	case kube.Forbidden:
		return scheduler.Forbidden
	}
	return scheduler.NotFound
}

// run is what the integrations' preflight reads of the input.
func (in Input) run() scheduler.PreflightRun {
	return scheduler.PreflightRun{Namespace: orFirst("", in.Spaces), Pods: in.Pods, Queues: in.Queues, Priorities: in.Priorities}
}
