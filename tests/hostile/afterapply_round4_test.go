package hostile

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The after-apply commands (status, preflight, status --watch) against an
// API server that answers as an attacker who read docs/after-apply.md
// would: continue tokens that never end, answers of another kind than
// asked, label selectors ignored, refusals on one API group only, and
// quota numbers no cluster has. Each probe runs the CLI as a process, so
// w.run holds it to the memory bound and a timeout; each must end quickly.

// fakeAPI is a fake API server: answers by exact path, then by path
// prefix (an API group), else 404 (an API that is not served).
type fakeAPI struct {
	mu       sync.Mutex
	answers  map[string]http.HandlerFunc
	prefixes map[string]http.HandlerFunc
	requests int
}

func (c *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.requests++
	h := c.answers[r.URL.Path]
	for p, ph := range c.prefixes {
		if h == nil && strings.HasPrefix(r.URL.Path, p) {
			h = ph
		}
	}
	c.mu.Unlock()
	if h == nil {
		h = apiStatus(404, "NotFound")
	}
	h(w, r)
}

func apiReply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func apiStatus(code int, reason string) http.HandlerFunc {
	return apiReply(code, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d,"message":"%s by the fake server"}`, reason, code, reason))
}

func apiList(apiVersion, kind string, items ...string) http.HandlerFunc {
	return apiReply(200, fmt.Sprintf(`{"kind":%q,"apiVersion":%q,"metadata":{},"items":[%s]}`, kind, apiVersion, strings.Join(items, ",")))
}

// serve starts the fake server and writes a kubeconfig for it outside the
// repository.
func (w *world) serve(c *fakeAPI) string {
	w.t.Helper()
	srv := httptest.NewServer(c)
	w.t.Cleanup(srv.Close)
	kc := filepath.Join(w.dir, "kubeconfig")
	require.NoError(w.t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: kubeconfig-token}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ml}}]
current-context: c
`, srv.URL)), 0o600))
	return kc
}

// quick runs an after-apply command: it must end well within its bounds.
func (w *world) quick(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	w.t.Logf("%v: exit %d, %s, %d MB\n%s%s", args[:2], r.code, r.took, r.maxRSS>>20, r.stdout, r.stderr)
	require.Less(w.t, r.took, 20*time.Second, "%v took %s\n%s%s", args, r.took, r.stdout, r.stderr)
	clean(w.t, r)
	require.NotContains(w.t, r.stdout+r.stderr, fileSecret)
	return r
}

const (
	rayJobsPath   = "/apis/ray.io/v1/namespaces/ml/rayjobs"
	workloadsPath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads"
	podGroupsPath = "/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups"
	podsPath      = "/api/v1/namespaces/ml/pods"
)

// suspendedJob is run1's RayJob, held by a queue.
func apiRayJob(run, uid string) string {
	return fmt.Sprintf(`{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":%q,"namespace":"ml","uid":%q,"labels":{"app.kubernetes.io/instance":%q}},"spec":{"entrypoint":"x"},"status":{"jobDeploymentStatus":"Suspended"}}`, run, uid, run)
}

func apiWorkload(name, jobUID, reason string) string {
	return fmt.Sprintf(`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":%q,"namespace":"ml","labels":{"kueue.x-k8s.io/job-uid":%q}},"spec":{"queueName":"lq"},"status":{"conditions":[{"type":"QuotaReserved","status":"False","reason":"Pending","message":%q}]}}`, name, jobUID, reason)
}

func apiPodGroup(name, run string) string {
	return fmt.Sprintf(`{"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":%q,"namespace":"ml","labels":{"app.kubernetes.io/instance":%q},"ownerReferences":[{"apiVersion":"ray.io/v1","kind":"RayJob","name":%q,"uid":"x"}]},"spec":{"queue":"q"},"status":{"schedulingConditions":[{"type":"UnschedulableOnNodePool","status":"True","reason":"NoNodes","message":"%s waits"}]}}`, name, run, run, name)
}

func apiPod(name, run string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ml","labels":{"app.kubernetes.io/instance":%q}},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Pending"}}`, name, run)
}

// endless answers every page with a continue token: a new one each time,
// or always the same.
func apiEndless(apiVersion, kind string, same bool) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		token := fmt.Sprintf("page-%d", n)
		mu.Unlock()
		if same {
			token = "again"
		}
		apiReply(200, fmt.Sprintf(`{"kind":%q,"apiVersion":%q,"metadata":{"continue":%q},"items":[]}`, kind, apiVersion, token))(w, r)
	}
}

func TestAfterApplyListsEndInPages(t *testing.T) {
	for _, same := range []bool{false, true} {
		t.Run(fmt.Sprintf("same token %v", same), func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(&fakeAPI{answers: map[string]http.HandlerFunc{rayJobsPath: apiEndless("ray.io/v1", "RayJobList", same)}})
			for _, args := range [][]string{
				{"status", "run1", "--kubeconfig", kc},
				{"status", "run1", "--watch", "--interval", "10ms", "--kubeconfig", kc},
			} {
				r := w.quick(args...)
				require.Equal(t, 5, r.code, "%v\n%s%s", args, r.stdout, r.stderr)
				require.Contains(t, r.stderr, "continue token", args)
			}
			// preflight --nodes lists the cluster's Nodes.
			kc = w.serve(&fakeAPI{answers: map[string]http.HandlerFunc{
				"/api/v1/namespaces/ml": apiReply(200, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`),
				"/api/v1/nodes":         apiEndless("v1", "NodeList", same),
			}})
			w.file("queuedRun.yaml", queuedRun)
			r := w.quick("preflight", "-f", "queuedRun.yaml", "--nodes", "--kubeconfig", kc)
			require.Equal(t, 5, r.code, r.stdout+r.stderr)
			require.Contains(t, r.stderr, "continue token")
		})
	}
}

func TestAfterApplyRefusesAnswersOfAnotherKind(t *testing.T) {
	secretData := base64.StdEncoding.EncodeToString([]byte(fileSecret))
	secret := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wl","namespace":"ml","labels":{"kueue.x-k8s.io/job-uid":"u-1","app.kubernetes.io/instance":"run1"}},"data":{"token":%q},"status":{"conditions":[{"type":"Admitted","status":"True"}]}}`, secretData)
	configMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wl","namespace":"ml","labels":{"kueue.x-k8s.io/job-uid":"u-1","app.kubernetes.io/instance":"run1"}},"data":{"a":"b"}}`
	rayJob := `{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"wl","namespace":"ml","labels":{"kueue.x-k8s.io/job-uid":"u-1","app.kubernetes.io/instance":"run1"}}}`
	for _, path := range []string{workloadsPath, podGroupsPath} {
		for _, tc := range []struct{ apiVersion, kind, item string }{
			{"v1", "SecretList", secret}, {"v1", "ConfigMapList", configMap}, {"ray.io/v1", "RayJobList", rayJob},
			// The list's kind is right, its item is not.
			{"kueue.x-k8s.io/v1beta2", "WorkloadList", secret},
			{"scheduling.run.ai/v2alpha2", "PodGroupList", configMap},
		} {
			t.Run(filepath.Base(path)+" answered with "+tc.kind, func(t *testing.T) {
				w := newWorld(t)
				kc := w.serve(&fakeAPI{answers: map[string]http.HandlerFunc{
					rayJobsPath: apiList("ray.io/v1", "RayJobList", apiRayJob("run1", "u-1")),
					path:        apiList(tc.apiVersion, tc.kind, tc.item),
				}})
				r := w.quick("status", "run1", "--kubeconfig", kc)
				require.Equal(t, 5, r.code, r.stdout+r.stderr)
				require.Contains(t, r.stderr, "expected ")
				require.NotContains(t, r.stdout, "Workload", "never reported as the run's state")
				require.NotContains(t, r.stdout, "PodGroup")
				require.NotContains(t, r.stdout+r.stderr, secretData)
			})
		}
	}
}

func TestAfterApplyKeepsOtherRunsOut(t *testing.T) {
	w := newWorld(t)
	// The server ignores every label selector: it answers with run2's
	// objects beside run1's.
	kc := w.serve(&fakeAPI{answers: map[string]http.HandlerFunc{
		rayJobsPath:   apiList("ray.io/v1", "RayJobList", apiRayJob("run1", "u-1"), apiRayJob("run2", "u-2")),
		workloadsPath: apiList("kueue.x-k8s.io/v1beta2", "WorkloadList", apiWorkload("run1-wl", "u-1", "run1 waits"), apiWorkload("run2-wl", "u-2", "run2 waits")),
		podGroupsPath: apiList("scheduling.run.ai/v2alpha2", "PodGroupList", apiPodGroup("run1-pg", "run1"), apiPodGroup("run2-pg", "run2")),
		podsPath:      apiList("v1", "PodList", apiPod("run1-head", "run1"), apiPod("run2-head", "run2")),
	}})
	r := w.quick("status", "run1", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "Workload queued (queue lq): Pending: run1 waits")
	require.Contains(t, r.stdout, "run1-pg waits")
	require.Contains(t, r.stdout, "run1-head")
	require.NotContains(t, r.stdout, "run2", "another run's objects are not this run's")
}

// queuedRun is a run queued by Kueue: 4 GPUs from LocalQueue lq.
const queuedRun = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: run1
  namespace: ml
  labels:
    app.kubernetes.io/instance: run1
    kueue.x-k8s.io/queue-name: lq
spec:
  entrypoint: python x.py
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: ray-head, image: img:1, resources: {requests: {cpu: "1"}}}]
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            containers: [{name: ray-worker, image: img:1, resources: {limits: {nvidia.com/gpu: "4"}}}]
`

// kueueAPI serves Kueue's API with LocalQueue lq of ClusterQueue cq,
// whose GPU quota and reservation are given as JSON values.
func kueueAPI(nominal, reserved string) *fakeAPI {
	return &fakeAPI{answers: map[string]http.HandlerFunc{
		"/api/v1/namespaces/ml":                                     apiReply(200, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`),
		"/apis/kueue.x-k8s.io/v1beta2":                              apiReply(200, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kueue.x-k8s.io/v1beta2","resources":[{"name":"localqueues","namespaced":true,"kind":"LocalQueue","verbs":["get"]},{"name":"clusterqueues","namespaced":false,"kind":"ClusterQueue","verbs":["get"]}]}`),
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/lq": apiReply(200, `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq","namespace":"ml"},"spec":{"clusterQueue":"cq"}}`),
		"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq": apiReply(200, `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq"},"spec":{"resourceGroups":[{"coveredResources":["cpu","nvidia.com/gpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"64"},{"name":"nvidia.com/gpu","nominalQuota":`+nominal+`}]}]}]},`+
			`"status":{"flavorsReservation":[{"name":"f","resources":[{"name":"nvidia.com/gpu","total":`+reserved+`}]}]}}`),
	}}
}

// localQueueLineOf is preflight's LocalQueue line.
func localQueueLineOf(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " LocalQueue ml/lq") || strings.Contains(l, " LocalQueue lq") {
			return l
		}
	}
	require.Fail(t, "no LocalQueue line", out)
	return ""
}

func TestAfterApplyJudgesRefusalsPerGroup(t *testing.T) {
	for _, group := range []string{"/apis/kueue.x-k8s.io/", "/apis/scheduling.run.ai/"} {
		t.Run("403 on "+group, func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(&fakeAPI{
				answers:  map[string]http.HandlerFunc{rayJobsPath: apiList("ray.io/v1", "RayJobList", apiRayJob("run1", "u-1"))},
				prefixes: map[string]http.HandlerFunc{group: apiStatus(403, "Forbidden")},
			})
			r := w.quick("status", "run1", "--kubeconfig", kc)
			require.NotContains(t, []int{2, 3, 4, 5}, r.code, r.stdout+r.stderr)
			resource := map[bool]string{true: "workloads", false: "podgroups"}[strings.Contains(group, "kueue")]
			require.Contains(t, r.stdout, "cannot list "+resource, "a problem line, as docs/after-apply.md promises")
		})
		t.Run("401 on "+group, func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(&fakeAPI{
				answers:  map[string]http.HandlerFunc{rayJobsPath: apiList("ray.io/v1", "RayJobList", apiRayJob("run1", "u-1"))},
				prefixes: map[string]http.HandlerFunc{group: apiStatus(401, "Unauthorized")},
			})
			r := w.quick("status", "run1", "--kubeconfig", kc)
			require.Equal(t, 4, r.code, r.stdout+r.stderr)
			require.Contains(t, r.stderr, "401 Unauthorized")
		})
	}
	t.Run("preflight: 403 on Kueue's group", func(t *testing.T) {
		w := newWorld(t)
		c := kueueAPI(`"16"`, `"0"`)
		c.prefixes = map[string]http.HandlerFunc{"/apis/kueue.x-k8s.io/": apiStatus(403, "Forbidden")}
		delete(c.answers, "/apis/kueue.x-k8s.io/v1beta2")
		kc := w.serve(c)
		w.file("queued.yaml", queuedRun)
		r := w.quick("preflight", "-f", "queued.yaml", "--kubeconfig", kc)
		require.NotContains(t, []int{0, 2, 4, 5}, r.code, "other lines are missing: exit 1\n%s%s", r.stdout, r.stderr)
		line := localQueueLineOf(t, r.stdout)
		require.True(t, strings.HasPrefix(line, "cannot tell"), line)
		require.Contains(t, line, "no permission")
	})
	t.Run("preflight: 401 on Kueue's group", func(t *testing.T) {
		w := newWorld(t)
		c := kueueAPI(`"16"`, `"0"`)
		c.prefixes = map[string]http.HandlerFunc{"/apis/kueue.x-k8s.io/": apiStatus(401, "Unauthorized")}
		delete(c.answers, "/apis/kueue.x-k8s.io/v1beta2")
		kc := w.serve(c)
		w.file("queuedRun.yaml", queuedRun)
		r := w.quick("preflight", "-f", "queuedRun.yaml", "--kubeconfig", kc)
		require.Equal(t, 4, r.code, r.stdout+r.stderr)
		require.Contains(t, r.stderr, "401 Unauthorized")
	})
}

func TestAfterApplyValidatesQuotaNumbers(t *testing.T) {
	for _, tc := range []struct{ nominal, reserved, named string }{
		{`"16"`, `"-64"`, "-64"},
		{`"16"`, `-64`, "-64"},
		{`"-16"`, `"0"`, "-16"},
		{`"1e40"`, `"0"`, "1e40"},
		{`"16"`, `"9e30"`, "9e30"},
		{`"16"`, `"lots"`, "lots"},
		{`16`, `1e300`, "1e+300"},
	} {
		t.Run(tc.nominal+" "+tc.reserved, func(t *testing.T) {
			w := newWorld(t)
			kc := w.serve(kueueAPI(tc.nominal, tc.reserved))
			w.file("queuedRun.yaml", queuedRun)
			r := w.quick("preflight", "-f", "queuedRun.yaml", "--kubeconfig", kc)
			line := localQueueLineOf(t, r.stdout)
			require.Contains(t, line, tc.named, "the value is named")
			require.Contains(t, line, "cannot tell", line)
			require.NotContains(t, line, "nvidia.com/gpu of", "never a free count from it")
			require.NotContains(t, line, "free of")
		})
	}
	// A sound ClusterQueue still says what is free.
	w := newWorld(t)
	kc := w.serve(kueueAPI(`"16"`, `"14"`))
	w.file("queuedRun.yaml", queuedRun)
	r := w.quick("preflight", "-f", "queuedRun.yaml", "--kubeconfig", kc)
	require.Contains(t, localQueueLineOf(t, r.stdout), "needs 4 nvidia.com/gpu; 2 of 16 free: queued until other Workloads finish")
}

func TestAfterApplyValidatesNodeNumbers(t *testing.T) {
	node := func(name, gpus string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":%s}}}`, name, gpus)
	}
	for _, gpus := range []string{`"1e30"`, `"-8"`, `"8E"`} {
		t.Run(gpus, func(t *testing.T) {
			w := newWorld(t)
			c := kueueAPI(`"16"`, `"0"`)
			c.answers["/api/v1/nodes"] = apiList("v1", "NodeList", node("bogus", gpus))
			kc := w.serve(c)
			w.file("queued.yaml", queuedRun)
			r := w.quick("preflight", "-f", "queued.yaml", "--nodes", "--kubeconfig", kc)
			named := strings.Trim(gpus, `"`)
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.Contains(l, "ExtendedResource nvidia.com/gpu") || strings.Contains(l, "Nodes RayJob/run1 gpu") {
					require.True(t, strings.HasPrefix(l, "cannot tell") || strings.HasPrefix(l, "missing"), l)
					require.Contains(t, l, "node bogus's allocatable nvidia.com/gpu is "+named, l)
				}
			}
			require.Contains(t, r.stdout, "ExtendedResource nvidia.com/gpu")
		})
	}
}

// A server answering every list with pages as large as a page may be
// (just under 32 MiB: 500 objects of 60 KB of small fields, which decode
// to several times their size), for every kind status lists, page after
// page: what the command holds stays under the memory bound, and it ends.
// Pages are written as they are made, so the test process stays small
// (the child's peak RSS counts the parent's as it was at the fork).
func TestAfterApplyMemoryUnderLargePages(t *testing.T) {
	var fields []string
	for i := range 4000 {
		fields = append(fields, fmt.Sprintf(`"k%d":"%d"`, i, i))
	}
	bulk := strings.Join(fields, ",")
	page := func(apiVersion, kind string, more bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			cont := ""
			if more && r.URL.Query().Get("continue") != "page-40" {
				cont = fmt.Sprintf("page-%d", len(r.URL.Query().Get("continue"))+1)
			}
			fmt.Fprintf(w, `{"kind":"%sList","apiVersion":%q,"metadata":{"continue":%q},"items":[`, kind, apiVersion, cont)
			for i := range 500 {
				if i > 0 {
					_, _ = io.WriteString(w, ",")
				}
				fmt.Fprintf(w, `{"apiVersion":%q,"kind":%q,"metadata":{"name":"run1-%d","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"},"annotations":{%s}}}`, apiVersion, kind, i, bulk)
			}
			_, _ = io.WriteString(w, "]}")
		}
	}
	for _, more := range []bool{false, true} {
		t.Run(fmt.Sprintf("more pages %v", more), func(t *testing.T) {
			answers := map[string]http.HandlerFunc{}
			for path, kind := range map[string][2]string{
				rayJobsPath: {"ray.io/v1", "RayJob"}, "/apis/ray.io/v1/namespaces/ml/rayclusters": {"ray.io/v1", "RayCluster"},
				podsPath: {"v1", "Pod"}, "/api/v1/namespaces/ml/services": {"v1", "Service"}, "/api/v1/namespaces/ml/configmaps": {"v1", "ConfigMap"},
				"/apis/apps/v1/namespaces/ml/deployments": {"apps/v1", "Deployment"},
			} {
				answers[path] = page(kind[0], kind[1], more)
			}
			w := newWorld(t)
			kc := w.serve(&fakeAPI{answers: answers})
			r := w.quick("status", "run1", "--kubeconfig", kc)
			require.Equal(t, 5, r.code, r.stderr)
			require.Contains(t, r.stderr, "the answers to this command are over")
			require.Less(t, r.maxRSS, int64(MaxRSS)*3/4, "with room to spare")

			// preflight lists the Nodes for the extended resources and --nodes.
			c := kueueAPI(`"16"`, `"0"`)
			c.answers["/api/v1/nodes"] = page("v1", "Node", more)
			kc = w.serve(c)
			w.file("queued.yaml", queuedRun)
			r = w.quick("preflight", "-f", "queued.yaml", "--nodes", "--kubeconfig", kc)
			if more {
				require.Equal(t, 5, r.code, r.stderr)
				require.Contains(t, r.stderr, "the answers to this command are over")
			}
			require.Less(t, r.maxRSS, int64(MaxRSS)*3/4, "with room to spare")

			// --nodes lists every Pod of the cluster, a page at a time,
			// with a budget of its own: what it holds stays bounded too.
			c = kueueAPI(`"16"`, `"0"`)
			c.answers["/api/v1/nodes"] = apiList("v1", "NodeList", `{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"64","pods":"110"}}}`)
			c.answers["/api/v1/pods"] = page("v1", "Pod", more)
			kc = w.serve(c)
			r = w.quick("preflight", "-f", "queued.yaml", "--nodes", "--kubeconfig", kc)
			t.Logf("preflight --nodes, every Pod: exit %d, %d MB", r.code, r.maxRSS>>20)
			if more {
				require.Equal(t, 5, r.code, r.stderr)
				require.Contains(t, r.stderr, "a list that never ends")
			}
			require.Less(t, r.maxRSS, int64(MaxRSS)*3/4, "with room to spare")
		})
	}
}

// Counts in a RayCluster's or Deployment's status that no cluster has are
// named, never printed as "workers ready -3/2".
func TestAfterApplyValidatesStatusCounts(t *testing.T) {
	w := newWorld(t)
	kc := w.serve(&fakeAPI{answers: map[string]http.HandlerFunc{
		"/apis/ray.io/v1/namespaces/ml/rayclusters": apiList("ray.io/v1", "RayClusterList", `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"c1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"status":{"state":"ready","readyWorkerReplicas":-3,"desiredWorkerReplicas":2}}`),
		"/apis/apps/v1/namespaces/ml/deployments":   apiList("apps/v1", "DeploymentList", `{"metadata":{"name":"d1","namespace":"ml","labels":{"app.kubernetes.io/instance":"run1"}},"spec":{"replicas":1e300},"status":{"readyReplicas":-1}}`),
	}})
	r := w.quick("status", "run1", "--kubeconfig", kc)
	require.NotContains(t, r.stdout, "-3/2")
	require.NotContains(t, r.stdout, "-1/")
	require.Contains(t, r.stdout, "status.readyWorkerReplicas is -3")
	require.Contains(t, r.stdout, "status.readyReplicas is -1")
	require.Contains(t, r.stdout, "spec.replicas is 1e+300")
}
