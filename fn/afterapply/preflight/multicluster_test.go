package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

const kv = "kueue.x-k8s.io/v1beta2"

// cluster is a fake API server answering gets and lists by path (404
// otherwise); it records the Accept header of every request for a Secret.
type cluster struct {
	gets  map[string]map[string]any
	lists map[string][]map[string]any
	mu    sync.Mutex
	// secretAccepts are the Accept headers of the Secret requests.
	secretAccepts []string
}

func (f *cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.URL.Path, "/secrets") {
		f.mu.Lock()
		f.secretAccepts = append(f.secretAccepts, r.Header.Get("Accept"))
		f.mu.Unlock()
	}
	if o, ok := f.gets[r.URL.Path]; ok {
		_ = json.NewEncoder(w).Encode(o)
		return
	}
	if items, ok := f.lists[r.URL.Path]; ok {
		_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": items})
		return
	}
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
}

func (f *cluster) conn(t *testing.T) *kube.Conn {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	return c
}

func served(gv string, resources ...string) map[string]any {
	var rs []any
	for _, r := range resources {
		rs = append(rs, map[string]any{"name": r, "namespaced": true, "kind": "X", "verbs": []any{"get"}})
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs}
}

func active(status, reason string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"type": "Active", "status": status, "reason": reason, "message": "said by the test"}}}
}

// queueObjects are a namespace "a", the LocalQueue lab on ClusterQueue cq
// with gpus nvidia.com/gpu, and Kueue's and KubeRay's APIs served.
func queueObjects(gpus string, checks ...string) map[string]map[string]any {
	spec := map[string]any{"resourceGroups": []any{map[string]any{
		"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
		"flavors": []any{map[string]any{"name": "f", "resources": []any{
			map[string]any{"name": "cpu", "nominalQuota": "1000"},
			map[string]any{"name": "memory", "nominalQuota": "100Ti"},
			map[string]any{"name": "nvidia.com/gpu", "nominalQuota": gpus}}}}}}}
	if len(checks) > 0 {
		var rules []any
		for _, c := range checks {
			rules = append(rules, map[string]any{"name": c})
		}
		spec["admissionChecksStrategy"] = map[string]any{"admissionChecks": rules}
	}
	return map[string]map[string]any{
		"/api/v1/namespaces/a": obj("v1", "Namespace", map[string]any{"name": "a"}, nil),
		"/apis/ray.io/v1":      served("ray.io/v1", "rayjobs", "rayclusters"),
		"/apis/" + kv:          served(kv, "localqueues", "clusterqueues"),
		"/apis/" + kv + "/namespaces/a/localqueues/lab": obj(kv, "LocalQueue", map[string]any{"name": "lab", "namespace": "a"},
			map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}),
		"/apis/" + kv + "/clusterqueues/cq": obj(kv, "ClusterQueue", map[string]any{"name": "cq"}, map[string]any{"spec": spec}),
	}
}

// manager is a sound MultiKueue manager for workers w1 and w2, changed
// by edit.
func manager(edit func(gets map[string]map[string]any)) *cluster {
	gets := queueObjects("64", "mk")
	gets["/apis/"+kv+"/admissionchecks/mk"] = obj(kv, "AdmissionCheck", map[string]any{"name": "mk"}, map[string]any{
		"spec": map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
			"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "mkc"}},
		"status": active("True", "Active")})
	gets["/apis/"+kv+"/multikueueconfigs/mkc"] = obj(kv, "MultiKueueConfig", map[string]any{"name": "mkc"},
		map[string]any{"spec": map[string]any{"clusters": []any{"w1", "w2"}}})
	for _, w := range []string{"w1", "w2"} {
		gets["/apis/"+kv+"/multikueueclusters/"+w] = obj(kv, "MultiKueueCluster", map[string]any{"name": w}, map[string]any{
			"spec":   map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": w + "-kubeconfig"}}},
			"status": active("True", "Active")})
		gets["/api/v1/namespaces/kueue-system/secrets/"+w+"-kubeconfig"] = map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
			"metadata": map[string]any{"name": w + "-kubeconfig", "namespace": "kueue-system"}}
	}
	if edit != nil {
		edit(gets)
	}
	return &cluster{gets: gets}
}

// worker is a worker whose LocalQueue's ClusterQueue has gpus
// nvidia.com/gpu ("" : no LocalQueue) and a node with 8 GPUs.
func worker(gpus string) *cluster {
	gets := queueObjects(gpus)
	if gpus == "" {
		delete(gets, "/apis/"+kv+"/namespaces/a/localqueues/lab")
	}
	return &cluster{gets: gets, lists: map[string][]map[string]any{"/api/v1/nodes": {gpuNode("gpu-0", 8, nil)}}}
}

// dispatchedRun is a RayJob queued in lab that MultiKueue dispatches: a
// head and one worker of 8 GPUs.
func dispatchedRun(t *testing.T) []rendered.Doc {
	t.Helper()
	docs := runDocs(t, "a", "j", 1, 0)
	docs[0].Data["metadata"].(map[string]any)["labels"] = map[string]any{"kueue.x-k8s.io/queue-name": "lab"}
	docs[0].Data["spec"].(map[string]any)["managedBy"] = "kueue.x-k8s.io/multikueue"
	require.True(t, Dispatched(docs))
	return docs
}

// The manager's MultiKueue setup (judged line by line by Kueue's
// PreflightDispatch, whose twin holds each line) joins the manager's
// report, each worker is judged as one cluster is, and the verdict names
// the workers that can take the run and why each other cannot.
func TestAcross(t *testing.T) {
	cases := []struct {
		name    string
		manager func(map[string]map[string]any)
		workers map[string]*cluster
		// managerLine is a line the manager section must hold ("state Kind name").
		managerLine string
		takers      []string
		whyNot      map[string]string
		failed      bool
	}{
		{name: "w1 takes it, w2 has no LocalQueue", workers: map[string]*cluster{"w1": worker("16"), "w2": worker("")},
			managerLine: "ok MultiKueueCluster w2", takers: []string{"w1"},
			whyNot: map[string]string{"w2": "LocalQueue a/lab: not found"}},
		{name: "w2's quota is smaller than the run", workers: map[string]*cluster{"w1": worker("16"), "w2": worker("4")},
			managerLine: "ok Secret kueue-system/w1-kubeconfig", takers: []string{"w1"},
			whyNot: map[string]string{"w2": "needs 8 nvidia.com/gpu; 4 of 4 free: more than the whole nominal quota, and ClusterQueue cq is in no cohort"}},
		{name: "w2 not Active on the manager", workers: map[string]*cluster{"w1": worker("16"), "w2": worker("16")},
			manager: func(g map[string]map[string]any) {
				g["/apis/"+kv+"/multikueueclusters/w2"]["status"] = active("False", "ClientConnectionFailed")
			},
			managerLine: "missing MultiKueueCluster w2", takers: []string{"w1"}, failed: true,
			whyNot: map[string]string{"w2": "MultiKueueCluster w2 is not Active on the manager: ClientConnectionFailed"}},
		{name: "a worker the config does not list", workers: map[string]*cluster{"w3": worker("16")},
			managerLine: "ok MultiKueueConfig mkc", takers: []string{}, failed: true,
			whyNot: map[string]string{"w3": "MultiKueueConfig mkc does not list it"}},
		{name: "a kubeconfig Secret missing", workers: map[string]*cluster{"w1": worker("16")},
			manager:     func(g map[string]map[string]any) { delete(g, "/api/v1/namespaces/kueue-system/secrets/w2-kubeconfig") },
			managerLine: "missing Secret kueue-system/w2-kubeconfig", takers: []string{"w1"}, failed: true},
		{name: "no worker given", managerLine: "ok AdmissionCheck mk", takers: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := manager(tc.manager)
			var workers []Worker
			for _, name := range []string{"w1", "w2", "w3"} {
				if w := tc.workers[name]; w != nil {
					workers = append(workers, Worker{Name: name, Conn: w.conn(t)})
				}
			}
			docs := dispatchedRun(t)
			in, err := InputOf(docs, "", "a")
			require.NoError(t, err)
			a, err := RunAcross(context.Background(), m.conn(t), workers, in, docs)
			require.NoError(t, err)
			var have []string
			for _, l := range a.Manager.Lines {
				have = append(have, string(l.State)+" "+lineRef(l))
			}
			assert.Contains(t, have, tc.managerLine)
			assert.NotContains(t, have, "ok ExtendedResource nvidia.com/gpu", "the manager runs no Pod")
			assert.Equal(t, tc.takers, a.Takers)
			for _, w := range a.Workers {
				if want, ok := tc.whyNot[w.Name]; ok {
					assert.False(t, w.CanTake)
					assert.Contains(t, strings.Join(w.WhyNot, "\n"), want)
				}
			}
			assert.Equal(t, tc.failed || len(tc.workers) > 0 && len(tc.takers) == 0, a.Failed(false))
			for _, accept := range m.secretAccepts {
				assert.Contains(t, accept, "as=PartialObjectMetadata", "a kubeconfig Secret is read as metadata only")
			}
			var out bytes.Buffer
			require.NoError(t, WriteAcross(&out, a, "text"))
			for _, w := range tc.takers {
				assert.Contains(t, out.String(), "worker "+w+" can take the run now")
			}
		})
	}
}

// A worker that does not answer is that worker's verdict, not the
// command's error; its error text is bounded and escaped.
func TestAcrossWorkerUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":503,"message":"down\n` + strings.Repeat("x", 2000) + `"}`))
	}))
	t.Cleanup(srv.Close)
	down, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	docs := dispatchedRun(t)
	in, err := InputOf(docs, "", "a")
	require.NoError(t, err)
	a, err := RunAcross(context.Background(), manager(nil).conn(t), []Worker{{Name: "w1", Conn: down}, {Name: "w2", Conn: worker("16").conn(t)}}, in, docs)
	require.NoError(t, err)
	assert.Equal(t, []string{"w2"}, a.Takers)
	require.Len(t, a.Workers, 2)
	assert.False(t, a.Workers[0].CanTake)
	assert.Contains(t, a.Workers[0].Error, "API server error")
	assert.LessOrEqual(t, len(a.Workers[0].Error), 310)
	var out bytes.Buffer
	require.NoError(t, WriteAcross(&out, a, "text"))
	assert.Contains(t, out.String(), "worker w1 cannot take the run now:\n  could not be asked:")
	assert.NotContains(t, out.String(), "down\n")
	require.NoError(t, WriteAcross(&out, a, "json"))
}

// A worker waits for quota when the LocalQueue line's Kueue prediction
// queues the run (Line.Waits); admitted now (by borrowing or preempting)
// is room, and a line that is not ok is judged as missing, not as waiting.
func TestWaitsForQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		line  Line
		waits bool
	}{
		{"free now", Line{State: OK}, false},
		{"queued", Line{State: OK, Waits: true}, true},
		{"not ok", Line{State: Missing, Waits: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.waits, waitsForQuota(tc.line)) })
	}
}
