package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	schedkai "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kai"
)

// fakeCluster answers lists, and gets of the objects in gets, by path;
// 404 for anything else (deniedCluster refusing nothing).
func fakeCluster(t *testing.T, lists map[string][]map[string]any, gets ...map[string]map[string]any) *kube.Conn {
	t.Helper()
	var g map[string]map[string]any
	if len(gets) > 0 {
		g = gets[0]
	}
	return deniedCluster(t, "", lists, g)
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

// kaiDocs is a RayJob whose pods name KAI, its workers required in one
// clique (their template's constraint), or the whole run (runWide: the
// RayJob's, which KAI's PodGroup applies to the head too).
func kaiDocs(t *testing.T, name string, workers int, runWide bool) []rendered.Doc {
	t.Helper()
	topo := `kai.scheduler/topology: t, kai.scheduler/topology-required-placement: clique`
	jobAnn, workerAnn := "{}", "{"+topo+"}"
	if runWide {
		jobAnn, workerAnn = "{"+topo+"}", "{}"
	}
	docs, err := rendered.Decode("run.yaml", []byte(`
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: `+name+`, namespace: a, annotations: `+jobAnn+`}
spec:
  submissionMode: HTTPMode
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {schedulerName: kai-scheduler, nodeSelector: {pool: cpu}, containers: [{name: head, resources: {requests: {cpu: "10"}}}]}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: `+itoa(workers)+`
      template:
        metadata: {annotations: `+workerAnn+`}
        spec:
          schedulerName: kai-scheduler
          nodeSelector: {pool: gpu}
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]`))
	require.NoError(t, err)
	return docs
}

// KAI's gang, as check's model (kai.GangOf) says: all or nothing, each
// worker group in one clique when its template requires it; a run-wide
// required level binds the head too, which no clique node takes.
func TestPlacementKAIGang(t *testing.T) {
	var nodes []map[string]any
	for _, n := range []string{"r0-n0", "r0-n1", "r1-n0", "r1-n1"} {
		nodes = append(nodes, gpuNode(n, 8, map[string]any{"pool": "gpu", "clique": n[:2]}))
	}
	nodes = append(nodes, gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}))
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": nodes, "/apis/resource.k8s.io/v1/resourceslices": {}, "/apis/resource.k8s.io/v1/deviceclasses": {},
		"/api/v1/pods": {}, "/apis/resource.k8s.io/v1/resourceclaims": {},
	})
	// elastic: minReplicas 1 of 3, so KAI's subgroup needs 1 (kai.Group);
	// the gang is placed with the 2 that fit in the rack left.
	elastic := kaiDocs(t, "elastic", 3, false)
	groups := elastic[0].Data["spec"].(map[string]any)["rayClusterSpec"].(map[string]any)["workerGroupSpecs"].([]any)
	groups[0].(map[string]any)["minReplicas"] = int64(1)
	docs := append(kaiDocs(t, "wide", 3, false), kaiDocs(t, "fits", 2, false)...)
	docs = append(docs, elastic...)
	lines := nodeLines(t, c, append(docs, kaiDocs(t, "whole", 1, true)...))
	el := lines["Nodes RayJob/elastic worker group gpu"]
	assert.Equal(t, Missing, el.State, el.Detail)
	assert.Contains(t, el.Detail, "2 of 3 placed with every other pod of the input")
	_, ok := lines["Run RayJob/elastic"]
	assert.False(t, ok, "KAI started the gang at its minimum: no GPU is held idle")

	wide := lines["Nodes RayJob/wide worker group gpu"]
	assert.Equal(t, Missing, wide.State, wide.Detail)
	assert.Contains(t, wide.Detail, "0 of 3 placed: KAI places the run's gang all or nothing, and 2 fit in one clique")
	assert.Contains(t, lines["Nodes RayJob/wide head"].Detail, "they fit, but KAI places the run's gang all or nothing")
	assert.Contains(t, lines["Run RayJob/wide"].Detail, "KAI places none, and the run waits, holding no GPU")
	assert.Equal(t, OK, lines["Nodes RayJob/fits worker group gpu"].State, "the waiting gang gave back what it tried")
	whole := lines["Run RayJob/whole"]
	assert.Equal(t, Missing, whole.State)
	assert.Contains(t, whole.Detail, "no node RayJob/whole head may use carries clique")
}

// Kueue merges its flavor's nodeLabels into every pod set: one GB300
// flavor covering cpu, memory and GPUs pins the CPU head to a GPU label no
// CPU node has, and preflight says which flavor and what to change.
func TestPlacementKueueFlavorLabels(t *testing.T) {
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": {gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}), gpuNode("gpu-0", 8, map[string]any{"pool": "gpu", "product": "GB300"})},
		"/apis/resource.k8s.io/v1/resourceslices": {}, "/apis/resource.k8s.io/v1/deviceclasses": {},
		"/api/v1/pods": {}, "/apis/resource.k8s.io/v1/resourceclaims": {},
	}, map[string]map[string]any{
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues/lab": obj("kueue.x-k8s.io/v1beta2", "LocalQueue",
			map[string]any{"name": "lab", "namespace": "a"}, map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}),
		"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq": obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", map[string]any{"name": "cq"},
			map[string]any{"spec": map[string]any{"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
				"flavors":          []any{map[string]any{"name": "gb300", "resources": []any{}}}}}}}),
		"/apis/kueue.x-k8s.io/v1beta2/resourceflavors/gb300": obj("kueue.x-k8s.io/v1beta2", "ResourceFlavor", map[string]any{"name": "gb300"},
			map[string]any{"spec": map[string]any{"nodeLabels": map[string]any{"product": "GB300"}}}),
	})
	docs := runDocs(t, "a", "q", 1, 0)
	docs[0].Data["metadata"].(map[string]any)["labels"] = map[string]any{"kueue.x-k8s.io/queue-name": "lab"}
	lines := nodeLines(t, c, docs)
	head := lines["Nodes RayJob/q head"]
	assert.Equal(t, Missing, head.State, head.Detail)
	assert.Contains(t, head.Detail, "Kueue (ClusterQueue cq) adds ResourceFlavor gb300's nodeLabels product=GB300 to this pod set's nodeSelector")
	assert.Contains(t, head.Detail, "a CPU flavor covering cpu and memory for the head")
	assert.Equal(t, OK, lines["Nodes RayJob/q worker group gpu"].State, "the workers select the flavor's label already")
	assert.Contains(t, lines["Run RayJob/q"].Detail, "the head cannot be placed while its 1 placed worker pods hold 8 nvidia.com/gpu idle")
}

// preflight places the gang check reports, from the same computation
// (placement.Gangs and placement.RunsOf): on the golden run-wide topology
// case, check's structured gang (GangsOf of fn/scheduler/kai) is preflight's run, pod set
// by pod set (count, minMember, required level), and the run-wide level is
// preferred there, not required.
func TestGangIsChecks(t *testing.T) {
	b, err := os.ReadFile("../../../tests/golden/gb300-gang-topology/expected/rayjob.yaml")
	require.NoError(t, err)
	docs, err := rendered.Decode("rayjob.yaml", b)
	require.NoError(t, err)
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
	}
	reports := schedkai.GangsOf(objs)
	require.Len(t, reports, 1)
	checked := reports[0].Run
	require.True(t, checked.Gang, "check reports KAI's gang")
	in, err := InputOf(docs, "", "default")
	require.NoError(t, err)
	runs, _ := runsOf(in)
	var placed *placement.Run
	for i := range runs {
		if runs[i].Gang {
			placed = &runs[i]
		}
	}
	require.NotNil(t, placed, "preflight places KAI's gang")
	type set struct {
		name           string
		count, minimum int64
		required       string
	}
	sets := func(r placement.Run) []set {
		var out []set
		for _, s := range r.Shapes {
			out = append(out, set{s.Name(), s.Count, s.MinMember, s.Required})
		}
		return out
	}
	assert.Equal(t, sets(checked), sets(*placed), "check's gang and preflight's, pod set by pod set")
	assert.Equal(t, checked.PodGroup, placed.PodGroup)
	assert.Empty(t, placed.Required, "the run-wide level is preferred, not required")
	var workers int
	for _, s := range placed.Shapes {
		if strings.HasPrefix(s.Role, "worker group ") {
			workers++
			assert.Equal(t, "nvidia.com/gpu.clique", s.Required, s.Name())
		}
	}
	assert.Positive(t, workers)
}

// A cluster's pods are listed whole, a page at a time, with a budget of
// their own: 12,000 running pods (about 60 MB of answers, over the
// report's 48 MiB) are all read and subtracted, and the command does not
// fail.
func TestPlacementReadsAClusterOfPods(t *testing.T) {
	const pods = 12000
	pad := strings.Repeat("x", 4500)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/pods":
			paged(w, r, "Pod", pods, func(i int) map[string]any {
				return obj("v1", "Pod", map[string]any{"name": "p" + strconv.Itoa(i), "namespace": "z", "annotations": map[string]any{"pad": pad}},
					map[string]any{"spec": map[string]any{"nodeName": "cpu-0", "containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "8m"}}}}},
						"status": map[string]any{"phase": "Running"}})
			})
		case "/api/v1/nodes":
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": []any{gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}), gpuNode("gpu-0", 8, map[string]any{"pool": "gpu"})}})
		case "/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceclaims":
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": []any{}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	lines := nodeLines(t, c, runDocs(t, "a", "j", 1, 0))
	head := lines["Nodes RayJob/j head"]
	assert.Equal(t, Missing, head.State, head.Detail)
	assert.Contains(t, head.Detail, "not enough free cpu, pods (1)", "96 of cpu-0's 100 CPUs and all its 110 pod slots held by the 12,000 pods")
}

// paged answers a v1 list of n objects of kind, 500 a page, made by item.
func paged(w http.ResponseWriter, r *http.Request, kind string, n int, item func(int) map[string]any) {
	const perPage = 500
	from := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		from, _ = strconv.Atoi(c)
	}
	var items []any
	for i := from; i < min(from+perPage, n); i++ {
		items = append(items, item(i))
	}
	next := ""
	if from+perPage < n {
		next = strconv.Itoa(from + perPage)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": kind + "List", "metadata": map[string]any{"continue": next}, "items": items})
}

// The Nodes of a 1,500-node cluster, each listing 40 kB of images (about
// 60 MB of answers, over the report's 48 MiB), are read a page at a time
// and placed on: the workers find the last node.
func TestPlacementReadsAThousandNodes(t *testing.T) {
	const nodes = 1500
	images := []any{map[string]any{"names": []any{strings.Repeat("i", 40000)}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/nodes":
			paged(w, r, "Node", nodes, func(i int) map[string]any {
				n := gpuNode(fmt.Sprintf("n%04d", i), 8, map[string]any{"pool": "cpu"})
				if i == nodes-1 {
					n = gpuNode(fmt.Sprintf("n%04d", i), 8, map[string]any{"pool": "gpu"})
				}
				n["status"].(map[string]any)["images"] = images
				return n
			})
		case "/api/v1/pods", "/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceclaims":
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": []any{}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	lines := nodeLines(t, c, runDocs(t, "a", "j", 1, 0))
	w := lines["Nodes RayJob/j worker group gpu"]
	assert.Equal(t, OK, w.State, w.Detail)
}

// GPUs only a DRA driver publishes, served through a DeviceClass's
// extendedResourceName, under KAI's gang: the gang is placed on those
// devices as the scheduler binds every pod, never refused for
// nvidia.com/gpu no node advertises.
func TestPlacementKAIGangExtendedResourceFromDRA(t *testing.T) {
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": {gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}),
			gpuNode("r0-n0", 0, map[string]any{"pool": "gpu", "clique": "r0"}), gpuNode("r0-n1", 0, map[string]any{"pool": "gpu", "clique": "r0"})},
		"/apis/resource.k8s.io/v1/resourceslices": {slice("r0-n0", "gpu.nvidia.com", 8), slice("r0-n1", "gpu.nvidia.com", 8)},
		"/apis/resource.k8s.io/v1/deviceclasses":  {class("gpu.nvidia.com", "gpu.nvidia.com", "nvidia.com/gpu")},
		"/api/v1/pods":                            {},
		"/apis/resource.k8s.io/v1/resourceclaims": {},
	})
	lines := nodeLines(t, c, kaiDocs(t, "dra", 2, false))
	for _, name := range []string{"Nodes RayJob/dra head", "Nodes RayJob/dra worker group gpu"} {
		l := lines[name]
		assert.Equal(t, OK, l.State, "%s: %s", name, l.Detail)
		assert.NotContains(t, l.Detail, "not enough free nvidia.com/gpu", name)
	}
	_, waits := lines["Run RayJob/dra"]
	assert.False(t, waits, "the gang is placed whole")
}
