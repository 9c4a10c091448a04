package preflight

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// The reader an integration gets hands what the cluster's Pods hold on
// the Nodes (a Pod that does not decode skipped, within a cluster-wide
// read's bound) and the Nodes, both from preflight's cache (read once); a
// refusal is Forbidden, and with the Nodes unread no Pod is counted.
func TestReader(t *testing.T) {
	pod := func(name string, spec any) map[string]any {
		return obj("v1", "Pod", map[string]any{"name": name, "namespace": "b"}, map[string]any{"spec": spec})
	}
	for _, tc := range []struct {
		name, deny        string
		held, nodes       []string
		podsOut, nodesOut scheduler.Outcome
	}{
		{"read", "", []string{"n1", "n2"}, []string{"n1", "n2"}, scheduler.Found, scheduler.Found},
		{"Pods refused", "/api/v1/pods", nil, []string{"n1", "n2"}, scheduler.Forbidden, scheduler.Found},
		{"Nodes refused", "/api/v1/nodes", nil, nil, scheduler.Found, scheduler.Forbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deniedCluster(t, tc.deny, map[string][]map[string]any{
				"/api/v1/pods":  {pod("p1", map[string]any{"nodeName": "n1"}), pod("bad", "no spec"), pod("p2", map[string]any{"nodeName": "n2"})},
				"/api/v1/nodes": {gpuNode("n1", 8, nil), gpuNode("n2", 0, nil)},
			}, nil)
			k := &cache{}
			r := reader{c, k}
			bound, out, _ := r.BoundPods(context.Background())
			assert.False(t, bound.More)
			assert.Equal(t, kube.MaxClusterItems, bound.Limit)
			var held []string
			if len(bound.Held) > 0 {
				held = slices.Sorted(maps.Keys(bound.Held))
			}
			assert.Equal(t, tc.held, held)
			nodes, nodesOut, _ := r.Nodes(context.Background())
			var names []string
			for _, n := range nodes {
				names = append(names, n.Name)
			}
			assert.Equal(t, tc.nodes, names)
			assert.Equal(t, tc.podsOut, out)
			assert.Equal(t, tc.nodesOut, nodesOut)
			require.NotNil(t, k.nodes, "the Nodes are preflight's cache's")
			require.NotNil(t, k.pods, "the Pods are preflight's cache's")
		})
	}
}

// Exists asks for an object's metadata alone (a Secret's data never
// reaches the process): found, absent or refused.
func TestReaderExists(t *testing.T) {
	const path = "/api/v1/namespaces/kueue-system/secrets/kc"
	meta := map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": map[string]any{"name": "kc", "namespace": "kueue-system"}}
	for _, tc := range []struct {
		name string
		gets map[string]map[string]any
		deny string
		out  scheduler.Outcome
	}{
		{"exists", map[string]map[string]any{path: meta}, "", scheduler.Found},
		{"absent", nil, "", scheduler.NotFound},
		{"refused", nil, path, scheduler.Forbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &cluster{gets: tc.gets}
			c := f.conn(t)
			if tc.deny != "" {
				c = deniedCluster(t, tc.deny, nil, nil)
			}
			out, _ := reader{c, &cache{}}.Exists(context.Background(), kube.Secrets, "kueue-system", "kc")
			assert.Equal(t, tc.out, out)
			for _, accept := range f.secretAccepts {
				assert.Contains(t, accept, "as=PartialObjectMetadata")
			}
		})
	}
}
