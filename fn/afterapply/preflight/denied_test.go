package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// deniedCluster answers lists, and gets of the objects in gets, by path,
// 403 on the path deny and 404 for anything else.
func deniedCluster(t *testing.T, deny string, lists map[string][]map[string]any, gets map[string]map[string]any) *kube.Conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == deny {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"denied by the test"}`))
			return
		}
		if o, ok := gets[r.URL.Path]; ok {
			_ = json.NewEncoder(w).Encode(o)
			return
		}
		items, ok := lists[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": items})
	}))
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	return c
}

// A read placement rests on that the cluster refuses makes every pod
// group's line "cannot tell", naming the read and that access was refused:
// never "ok" (the devices or the flavors it did not see may be missing),
// and, where the read could only have shown less room (bound pods,
// allocated claims), a "missing" stays "missing".
func TestPlacementDeniedReads(t *testing.T) {
	lists := func() map[string][]map[string]any {
		return map[string][]map[string]any{
			"/api/v1/nodes": {gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}), gpuNode("gpu-0", 8, map[string]any{"pool": "gpu"})},
			"/apis/resource.k8s.io/v1/resourceslices": {slice("gpu-0", "roce", 8)},
			"/apis/resource.k8s.io/v1/deviceclasses":  {class("roce", "roce", "")},
			"/api/v1/pods":                            {},
			"/apis/resource.k8s.io/v1/resourceclaims": {},
		}
	}
	gets := map[string]map[string]any{
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues/lab": obj("kueue.x-k8s.io/v1beta2", "LocalQueue",
			map[string]any{"name": "lab", "namespace": "a"}, map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}),
		"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq": obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", map[string]any{"name": "cq"},
			map[string]any{"spec": map[string]any{"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "nvidia.com/gpu"},
				"flavors":          []any{map[string]any{"name": "any", "resources": []any{}}}}}}}),
		"/apis/kueue.x-k8s.io/v1beta2/resourceflavors/any": obj("kueue.x-k8s.io/v1beta2", "ResourceFlavor", map[string]any{"name": "any"},
			map[string]any{"spec": map[string]any{}}),
	}
	cases := []struct {
		name, deny, named string
		workers           int
		want              State // of the worker group's line
	}{
		{"nothing denied: all placed", "", "", 1, OK},
		{"ResourceSlices denied", "/apis/resource.k8s.io/v1/resourceslices", "the ResourceSlices", 1, CannotTell},
		{"DeviceClasses denied", "/apis/resource.k8s.io/v1/deviceclasses", "the DeviceClasses", 1, CannotTell},
		{"Pods denied", "/api/v1/pods", "the pods already bound", 1, CannotTell},
		{"ResourceClaims denied", "/apis/resource.k8s.io/v1/resourceclaims", "the ResourceClaims already allocated", 1, CannotTell},
		{"LocalQueue denied", "/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues/lab", "Kueue's LocalQueue a/lab", 1, CannotTell},
		{"ClusterQueue denied", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq", "Kueue's ClusterQueue cq", 1, CannotTell},
		{"ResourceFlavor denied", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors/any", "Kueue's ResourceFlavor any", 1, CannotTell},
		{"too big a run: missing", "", "", 2, Missing},
		{"too big, ResourceSlices denied: unknown", "/apis/resource.k8s.io/v1/resourceslices", "the ResourceSlices", 2, CannotTell},
		{"too big, Pods denied: still missing", "/api/v1/pods", "the pods already bound", 2, Missing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := deniedCluster(t, tc.deny, lists(), gets)
			docs := runDocs(t, "a", "j", tc.workers, 8)
			docs[0].Data["metadata"].(map[string]any)["labels"] = map[string]any{"kueue.x-k8s.io/queue-name": "lab"}
			lines := nodeLines(t, c, docs)
			w := lines["Nodes RayJob/j worker group gpu"]
			assert.Equal(t, tc.want, w.State, w.Detail)
			if tc.named != "" {
				assert.Contains(t, w.Detail, tc.named)
				assert.Contains(t, w.Detail, "could not be read (access refused (403 Forbidden): denied by the test)", "why: access, and the server's words")
			}
			if tc.want == CannotTell {
				assert.NotEqual(t, OK, lines["Nodes RayJob/j head"].State, lines["Nodes RayJob/j head"].Detail)
			}
			if run, ok := lines["Run RayJob/j"]; ok && tc.want == CannotTell {
				assert.Equal(t, CannotTell, run.State, run.Detail)
			}
		})
	}
	t.Run("Nodes denied", func(t *testing.T) {
		c := deniedCluster(t, "/api/v1/nodes", lists(), gets)
		lines := nodeLines(t, c, runDocs(t, "a", "j", 1, 8))
		l := lines["Nodes (all)"]
		assert.Equal(t, CannotTell, l.State, l.Detail)
		assert.Contains(t, l.Detail, "no permission")
		assert.Len(t, lines, 1, "no pod group is judged without the nodes")
	})
}

// lineOfKind is preflight's line of the input's object of kind (a queue)
// on c, for run a's docs in namespace a; the test fails without one.
func lineOfKind(t *testing.T, c *kube.Conn, docs []rendered.Doc, kind string) Line {
	t.Helper()
	in, err := InputOf(docs, "", "a")
	require.NoError(t, err)
	rep, err := Run(context.Background(), c, in)
	require.NoError(t, err)
	for _, l := range rep.Lines {
		if l.Kind == kind {
			return l
		}
	}
	require.Failf(t, "no line", "a %s line among %d", kind, len(rep.Lines))
	return Line{}
}
