package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/rendered"
)

// fakeCluster answers lists (and gets by name) from objects per resource
// path, 404 for anything else.
func fakeCluster(t *testing.T, lists map[string][]map[string]any) *kube.Conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		items, ok := lists[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": items})
	}))
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	return c
}

func obj(apiVersion, kind string, meta map[string]any, rest map[string]any) map[string]any {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range rest {
		o[k] = v
	}
	return o
}

func gpuNode(name string, gpus int, labels map[string]any) map[string]any {
	alloc := map[string]any{"cpu": "100", "memory": "1000Gi", "pods": "110"}
	if gpus > 0 {
		alloc["nvidia.com/gpu"] = gpus
	}
	return obj("v1", "Node", map[string]any{"name": name, "labels": labels}, map[string]any{"status": map[string]any{"allocatable": alloc}})
}

func slice(node, driver string, devices int) map[string]any {
	var ds []any
	for i := 0; i < devices; i++ {
		ds = append(ds, map[string]any{"name": "d" + string(rune('a'+i))})
	}
	return obj("resource.k8s.io/v1", "ResourceSlice", map[string]any{"name": node + "-" + driver},
		map[string]any{"spec": map[string]any{"driver": driver, "nodeName": node, "pool": map[string]any{"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": ds}})
}

func class(name, driver, extended string) map[string]any {
	spec := map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{"expression": `device.driver == "` + driver + `"`}}}}
	if extended != "" {
		spec["extendedResourceName"] = extended
	}
	return obj("resource.k8s.io/v1", "DeviceClass", map[string]any{"name": name}, map[string]any{"spec": spec})
}

// runDocs is a default-scheduler RayJob in ns: a head and workers × 8
// GPUs, each worker claiming nics RoCE NICs when nics > 0.
func runDocs(t *testing.T, ns, name string, workers, nics int) []rendered.Doc {
	t.Helper()
	claims := ""
	tmpl := ""
	if nics > 0 {
		claims = "\n          resourceClaims: [{name: roce, resourceClaimTemplateName: roce-" + name + "}]"
		tmpl = `
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: roce-` + name + `, namespace: ` + ns + `}
spec: {spec: {devices: {requests: [{name: nics, exactly: {deviceClassName: roce, count: ` + itoa(nics) + `}}]}}}`
	}
	docs, err := rendered.Decode("run.yaml", []byte(`
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  submissionMode: HTTPMode
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {nodeSelector: {pool: cpu}, containers: [{name: head, resources: {requests: {cpu: "10"}}}]}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: `+itoa(workers)+`
      template:
        spec:
          nodeSelector: {pool: gpu}`+claims+`
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]`+tmpl))
	require.NoError(t, err)
	return docs
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func nodeLines(t *testing.T, c *kube.Conn, docs []rendered.Doc) map[string]Line {
	t.Helper()
	in, err := InputOf(docs, "", "a")
	require.NoError(t, err)
	in.Nodes = true
	rep, err := Run(context.Background(), c, in)
	require.NoError(t, err)
	out := map[string]Line{}
	for _, l := range rep.Lines {
		if l.Kind == "Nodes" || l.Kind == "Run" {
			out[l.Kind+" "+l.Name] = l
		}
	}
	return out
}

// GPUs only a DRA driver publishes, through a DeviceClass declaring
// extendedResourceName: nvidia.com/gpu, are GPUs a pod asking nvidia.com/gpu
// gets, one device per GPU, on its own node.
func TestPlacementExtendedResourceFromDRA(t *testing.T) {
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": {gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}), gpuNode("gpu-0", 0, map[string]any{"pool": "gpu"}), gpuNode("gpu-1", 0, map[string]any{"pool": "gpu"})},
		"/apis/resource.k8s.io/v1/resourceslices": {slice("gpu-0", "gpu.nvidia.com", 8), slice("gpu-1", "gpu.nvidia.com", 4)},
		"/apis/resource.k8s.io/v1/deviceclasses":  {class("gpu.nvidia.com", "gpu.nvidia.com", "nvidia.com/gpu")},
		"/api/v1/pods":                            {},
		"/apis/resource.k8s.io/v1/resourceclaims": {},
	})
	lines := nodeLines(t, c, runDocs(t, "a", "j", 2, 0))
	w := lines["Nodes RayJob/j worker group gpu"]
	assert.Equal(t, Missing, w.State, w.Detail)
	assert.Contains(t, w.Detail, "1 of 2 placed")
	assert.Contains(t, w.Detail, "not enough free devices of gpu.nvidia.com (2)")
	assert.Contains(t, lines["Run RayJob/j"].Detail, "hold 8 nvidia.com/gpu idle")
}

// Per node, after what is already bound and allocated: two runs in two
// namespaces, placed one after another; gpu-0's GPUs are held by a running
// pod, gpu-1's NICs by an allocated claim; half the nodes have 8 NICs.
func TestPlacementPerNodeAfterAllocations(t *testing.T) {
	var nodes, slices []map[string]any
	for i, nics := range []int{8, 8, 8, 8, 4, 4} {
		name := "gpu-" + itoa(i)
		nodes = append(nodes, gpuNode(name, 8, map[string]any{"pool": "gpu"}))
		slices = append(slices, slice(name, "roce", nics))
	}
	nodes = append(nodes, gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}))
	running := obj("v1", "Pod", map[string]any{"name": "other", "namespace": "z"}, map[string]any{
		"spec":   map[string]any{"nodeName": "gpu-0", "containers": []any{map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 8}}}}},
		"status": map[string]any{"phase": "Running"}})
	var results []any
	for i := 0; i < 8; i++ {
		results = append(results, map[string]any{"request": "nics", "driver": "roce", "pool": "gpu-1", "device": "d" + itoa(i)})
	}
	claim := obj("resource.k8s.io/v1", "ResourceClaim", map[string]any{"name": "held", "namespace": "z"}, map[string]any{
		"spec":   map[string]any{},
		"status": map[string]any{"allocation": map[string]any{"devices": map[string]any{"results": results}}}})
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": nodes, "/apis/resource.k8s.io/v1/resourceslices": slices,
		"/apis/resource.k8s.io/v1/deviceclasses":  {class("roce", "roce", "")},
		"/api/v1/pods":                            {running},
		"/apis/resource.k8s.io/v1/resourceclaims": {claim},
	})
	docs := append(runDocs(t, "a", "first", 1, 8), runDocs(t, "b", "second", 2, 8)...)
	lines := nodeLines(t, c, docs)
	first, second := lines["Nodes RayJob/first worker group gpu"], lines["Nodes RayJob/second worker group gpu"]
	assert.Equal(t, OK, first.State, first.Detail)
	assert.Equal(t, "a", first.Namespace, "several namespaces: each line names its own")
	assert.Equal(t, Missing, second.State, second.Detail)
	assert.Contains(t, second.Detail, "1 of 2 placed")
	assert.True(t, strings.Contains(lines["Run RayJob/second"].Detail, "hold 8 nvidia.com/gpu idle"), lines["Run RayJob/second"].Detail)
}
