package kueue

import (
	"context"
	"testing"

	"errors"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// fakeReader answers gets of the objects in gets, keyed by path
// (/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE/NAME), and lists of
// lists, refuses the path deny as the API server's 403 does, and finds
// nothing else.
type fakeReader struct {
	deny  string
	gets  map[string]map[string]any
	lists map[string][]map[string]any
}

func pathOf(gvr schema.GroupVersionResource, ns, name string) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + gvr.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

func (f fakeReader) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, scheduler.Outcome, error) {
	p := pathOf(gvr, ns, name)
	if p == f.deny {
		return nil, scheduler.Forbidden, errors.New("access refused (403 Forbidden): denied by the test")
	}
	if gvr.Resource == "secrets" {
		return nil, scheduler.NotFound, errors.New("a Secret's data was read: only Exists may ask of a Secret")
	}
	if o, ok := f.gets[p]; ok {
		return &unstructured.Unstructured{Object: o}, scheduler.Found, nil
	}
	return nil, scheduler.NotFound, nil
}

func (f fakeReader) List(_ context.Context, gvr schema.GroupVersionResource, ns, _ string) ([]unstructured.Unstructured, scheduler.Outcome, error) {
	p := pathOf(gvr, ns, "")
	if p == f.deny {
		return nil, scheduler.Forbidden, errors.New("access refused (403 Forbidden): denied by the test")
	}
	items, ok := f.lists[p]
	if !ok {
		return nil, scheduler.NotFound, nil
	}
	out := make([]unstructured.Unstructured, len(items))
	for i, o := range items {
		out[i] = unstructured.Unstructured{Object: o}
	}
	return out, scheduler.Found, nil
}

// Exists is Get's answer without the object.
func (f fakeReader) Exists(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (scheduler.Outcome, error) {
	if p := pathOf(gvr, ns, name); p == f.deny {
		return scheduler.Forbidden, errors.New("access refused (403 Forbidden): denied by the test")
	} else if _, ok := f.gets[p]; ok {
		return scheduler.Found, nil
	}
	return scheduler.NotFound, nil
}

func (fakeReader) BoundPods(context.Context) (scheduler.BoundPods, scheduler.Outcome, error) {
	return scheduler.BoundPods{}, scheduler.NotFound, nil
}

func (fakeReader) Nodes(context.Context) ([]*corev1.Node, scheduler.Outcome, error) {
	return nil, scheduler.NotFound, nil
}

func (fakeReader) Stops(error) bool { return false }

// obj is an object of kind at apiVersion with metadata and more fields.
func obj(apiVersion, kind string, metadata, more map[string]any) map[string]any {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": metadata}
	for k, v := range more {
		o[k] = v
	}
	return o
}

// A LocalQueue's flavors are read through its ClusterQueue, each flavor
// once; any object absent leaves nothing to assign (nil), any read refused
// or undecodable says which one (unread).
func TestReadQueueFlavors(t *testing.T) {
	const (
		lqPath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues/lab"
		cqPath = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq"
		rfPath = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors/gb300"
	)
	lq := func(spec map[string]any) map[string]any {
		return obj("kueue.x-k8s.io/v1beta2", "LocalQueue", map[string]any{"name": "lab", "namespace": "a"}, map[string]any{"spec": spec})
	}
	group := func(covered ...any) any {
		return map[string]any{"coveredResources": covered, "flavors": []any{map[string]any{"name": "gb300"}, map[string]any{}}}
	}
	cq := obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", map[string]any{"name": "cq"},
		map[string]any{"spec": map[string]any{"resourceGroups": []any{group("cpu"), group("nvidia.com/gpu")}}})
	rf := func(spec map[string]any) map[string]any {
		return obj("kueue.x-k8s.io/v1beta2", "ResourceFlavor", map[string]any{"name": "gb300"}, map[string]any{"spec": spec})
	}
	all := func(lqSpec, rfSpec map[string]any) map[string]map[string]any {
		return map[string]map[string]any{lqPath: lq(lqSpec), cqPath: cq, rfPath: rf(rfSpec)}
	}
	toCQ := map[string]any{"clusterQueue": "cq"}
	product := map[string]any{"nodeLabels": map[string]any{"product": "GB300"}}
	for _, tc := range []struct {
		name, deny string
		gets       map[string]map[string]any
		want       *queueFlavors
		unread     string
	}{
		{"found", "", all(toCQ, product), &queueFlavors{clusterQueue: "cq",
			groups:  []ResourceGroup{{Covered: []corev1.ResourceName{"cpu"}, Flavors: []string{"gb300"}}, {Covered: []corev1.ResourceName{"nvidia.com/gpu"}, Flavors: []string{"gb300"}}},
			flavors: map[string]Flavor{"gb300": {Name: "gb300", NodeLabels: map[string]string{"product": "GB300"}}}}, ""},
		{"no LocalQueue", "", nil, nil, ""},
		// the ClusterQueue collection answers too: a get with no name would find it
		{"LocalQueue names no ClusterQueue", "", map[string]map[string]any{lqPath: lq(map[string]any{}), cqPath: cq, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues": cq, rfPath: rf(product)}, nil, ""},
		{"no ClusterQueue", "", map[string]map[string]any{lqPath: lq(toCQ)}, nil, ""},
		{"no ResourceFlavor", "", map[string]map[string]any{lqPath: lq(toCQ), cqPath: cq}, nil, ""},
		{"LocalQueue refused", lqPath, all(toCQ, product), nil, "Kueue's LocalQueue a/lab could not be read (access refused"},
		{"ClusterQueue refused", cqPath, all(toCQ, product), nil, "Kueue's ClusterQueue cq could not be read (access refused"},
		{"ResourceFlavor refused", rfPath, all(toCQ, product), nil, "Kueue's ResourceFlavor gb300 could not be read (access refused"},
		{"ResourceFlavor undecodable", "", all(toCQ, map[string]any{"nodeLabels": "GB300"}), nil, "Kueue's ResourceFlavor gb300 could not be read (error: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readQueueFlavors(context.Background(), fakeReader{deny: tc.deny, gets: tc.gets}, "a", "lab")
			require.NoError(t, err)
			if tc.unread == "" {
				require.Equal(t, tc.want, got)
				return
			}
			require.NotNil(t, got)
			require.Contains(t, got.unread, tc.unread)
			require.Equal(t, queueFlavors{unread: got.unread}, *got)
		})
	}
}

// The note names each assigned flavor's labels the pod did not select
// already, sorted, and nothing when Kueue adds none.
func TestAdmissionNote(t *testing.T) {
	qf := &queueFlavors{clusterQueue: "cq", flavors: map[string]Flavor{
		"cpu": {NodeLabels: map[string]string{"pool": "cpu"}},
		"gpu": {NodeLabels: map[string]string{"product": "GB300", "pool": "gpu"}},
	}}
	for _, tc := range []struct {
		name     string
		selector map[string]string
		flavors  []string
		want     string
	}{
		{"no flavor", nil, nil, ""},
		{"selected already", map[string]string{"pool": "x"}, []string{"cpu"}, ""},
		{"one flavor, sorted", nil, []string{"gpu"}, "Kueue (ClusterQueue cq) adds ResourceFlavor gpu's nodeLabels pool=gpu, product=GB300 to this pod set's nodeSelector, as it does for every pod set whose resources a flavor covers"},
		{"one key selected", map[string]string{"pool": "gpu"}, []string{"cpu", "gpu"}, "Kueue (ClusterQueue cq) adds ResourceFlavor gpu's nodeLabels product=GB300 to this pod set's nodeSelector, as it does for every pod set whose resources a flavor covers"},
		{"two flavors", nil, []string{"cpu", "gpu"}, "Kueue (ClusterQueue cq) adds ResourceFlavor cpu's nodeLabels pool=cpu and ResourceFlavor gpu's nodeLabels pool=gpu, product=GB300 to this pod set's nodeSelector, as it does for every pod set whose resources a flavor covers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := admissionNote(&corev1.PodSpec{NodeSelector: tc.selector}, Admitted{Flavors: tc.flavors}, qf)
			require.Equal(t, tc.want, got)
		})
	}
}
