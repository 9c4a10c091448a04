package preflight

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// An extended resource comes from the nodes advertising it, else from a
// DeviceClass declaring it; neither is missing, unless a node was left out
// for a value no node has (then it cannot be told); unread Nodes cannot
// be told either.
func TestExtendedResourceLine(t *testing.T) {
	bad := func(name, gpus string) map[string]any {
		n := gpuNode(name, 0, nil)
		n["status"].(map[string]any)["allocatable"].(map[string]any)["nvidia.com/gpu"] = gpus
		return n
	}
	for _, tc := range []struct {
		name           string
		nodes, classes []map[string]any
		deny           string
		state          State
		detail         string
	}{
		{name: "a device plugin", nodes: []map[string]any{gpuNode("g0", 8, nil), gpuNode("g1", 4, nil), gpuNode("c0", 0, nil)},
			state: OK, detail: "advertised by 2 node(s) (a device plugin), up to 8 per node"},
		{name: "a DRA DeviceClass", nodes: []map[string]any{gpuNode("c0", 0, nil)},
			classes: []map[string]any{class("roce", "roce", ""), class("gpu.nvidia.com", "gpu.nvidia.com", "nvidia.com/gpu")},
			state:   OK, detail: "no node advertises it; DeviceClass gpu.nvidia.com declares it as its extendedResourceName"},
		{name: "neither", nodes: []map[string]any{gpuNode("c0", 0, nil)}, classes: []map[string]any{class("roce", "roce", "")},
			state: Missing, detail: "no node advertises nvidia.com/gpu and no DeviceClass declares extendedResourceName: nvidia.com/gpu; the pods requesting it stay Pending"},
		{name: "a node left out", nodes: []map[string]any{gpuNode("c0", 0, nil), bad("huge", "1e30")},
			state: CannotTell, detail: "no node counted advertises nvidia.com/gpu; left out, as no node has such a value: node huge's allocatable nvidia.com/gpu"},
		{name: "Nodes refused", deny: "/api/v1/nodes", state: CannotTell, detail: "no permission to read it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists := map[string][]map[string]any{"/api/v1/nodes": tc.nodes, "/apis/resource.k8s.io/v1/deviceclasses": tc.classes}
			c := deniedCluster(t, tc.deny, lists, nil)
			l, err := extendedResourceLine(context.Background(), c, Line{Need: Need{Kind: "ExtendedResource", Name: "nvidia.com/gpu"}}, &cache{})
			require.NoError(t, err)
			assert.Equal(t, tc.state, l.State, l.Detail)
			assert.Contains(t, l.Detail, tc.detail)
		})
	}
}

// A Node is read unless a field read does not decode or an allocatable
// value is one no node has; the nodes left out are named, at most three
// and a count.
func TestReadNode(t *testing.T) {
	for _, tc := range []struct {
		name, gpus, why string
		taints          any
	}{
		{"in range", "8", "", nil},
		{"too many", "1e30", "node n's allocatable nvidia.com/gpu", nil},
		{"negative", "-8", "node n's allocatable nvidia.com/gpu", nil},
		{"a field read that does not decode", "8", "node n cannot be read", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := gpuNode("n", 0, nil)
			u["status"].(map[string]any)["allocatable"].(map[string]any)["nvidia.com/gpu"] = tc.gpus
			if tc.taints != nil {
				u["spec"] = map[string]any{"taints": tc.taints}
			}
			raw, err := json.Marshal(u)
			require.NoError(t, err)
			var l leanNode
			n, why := readNode(&l, utiljson.Unmarshal(raw, &l))
			assert.Equal(t, tc.why == "", n != nil)
			if tc.why == "" {
				assert.Empty(t, why)
				return
			}
			assert.Contains(t, why, tc.why)
		})
	}
	assert.Equal(t, "left out, as no node has such a value: a; b; c; and 2 more", leftOut([]string{"a", "b", "c", "d", "e"}))
	assert.Equal(t, "left out, as no node has such a value: a", leftOut([]string{"a"}))
}
