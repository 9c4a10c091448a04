package runstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

// fakeCluster answers GETs by path (a Status answers with its code);
// anything else is 404 (not served). It ignores label selectors, as a
// hostile server may: the client's own filtering and the ownership rule
// are what keep other runs out.
type fakeCluster map[string]string

func (f fakeCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body, ok := f[r.URL.Path]
	if !ok {
		body = status(404, "NotFound")
	}
	var st struct {
		Kind string `json:"kind"`
		Code int    `json:"code"`
	}
	if json.Unmarshal([]byte(body), &st) == nil && st.Kind == "Status" {
		w.WriteHeader(st.Code)
	}
	_, _ = w.Write([]byte(body))
}

func status(code int, reason string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`, reason, code)
}

func conn(t *testing.T, f fakeCluster) *kube.Conn {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "ml", kube.Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	return c
}

const (
	jobsPath     = "/apis/ray.io/v1/namespaces/ml/rayjobs"
	clustersPath = "/apis/ray.io/v1/namespaces/ml/rayclusters"
	podsPath     = "/api/v1/namespaces/ml/pods"
)

func list(apiVersion, kind string, items ...string) string {
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"%sList","metadata":{},"items":[%s]}`, apiVersion, kind, strings.Join(items, ","))
}

// meta is an object's metadata: name, uid, run label (none if ""), the
// owner (kind/uid, none if "") and extra fields.
func meta(name, uid, run, owner, extra string) string {
	labels := "{}"
	if run != "" {
		labels = fmt.Sprintf(`{"app.kubernetes.io/instance":%q%s}`, run, extra)
	}
	refs := "[]"
	if kind, ouid, ok := strings.Cut(owner, "/"); ok {
		refs = fmt.Sprintf(`[{"apiVersion":"ray.io/v1","kind":%q,"name":"x","uid":%q,"controller":true}]`, kind, ouid)
	}
	return fmt.Sprintf(`"metadata":{"name":%q,"namespace":"ml","uid":%q,"labels":%s,"ownerReferences":%s,"annotations":{"nemo-rl.nvidia.com/state":"stopped"}}`, name, uid, labels, refs)
}

func job(name, uid, run, spec, cluster, status string) string {
	return fmt.Sprintf(`{"apiVersion":"ray.io/v1","kind":"RayJob",%s,"spec":{"entrypoint":"x"%s},"status":{"jobDeploymentStatus":%q,"rayClusterName":%q}}`, meta(name, uid, run, "", ""), spec, status, cluster)
}

func cluster(name, uid, run, owner string) string {
	return fmt.Sprintf(`{"apiVersion":"ray.io/v1","kind":"RayCluster",%s,"spec":{},"status":{"state":"ready"}}`, meta(name, uid, run, owner, ""))
}

func pod(name, run, owner string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod",%s,"spec":{"containers":[{"name":"ray-head","image":"i"}]},"status":{"phase":"Running"}}`, meta(name, "p-"+name, run, owner, ""))
}

// ownershipCase is a cluster status reads and what it must report.
type ownershipCase struct {
	name             string
	cluster          fakeCluster
	verdict          Verdict
	clusters, pods   []string
	services         []string
	problem, summary string
}

// ownershipCases are the clusters TestCollectReadsOnlyWhatTheRunOwns reads.
func ownershipCases() []ownershipCase {
	return []ownershipCase{
		{
			name: "RayJob names another run's RayCluster",
			cluster: fakeCluster{
				jobsPath:                 list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run2-c", "Running")),
				clustersPath:             list("ray.io/v1", "RayCluster", cluster("run2-c", "c2", "run2", "RayJob/j2")),
				clustersPath + "/run2-c": cluster("run2-c", "c2", "run2", "RayJob/j2"),
				podsPath:                 list("v1", "Pod", pod("run2-c-head", "run2", "RayCluster/c2")),
			},
			verdict: Running, problem: "RayCluster run2-c named by RayJob run1 is not owned by it: ignored",
		},
		{
			name: "a RayCluster labelled with the run, created by another run's RayJob",
			cluster: fakeCluster{
				jobsPath:     list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Running")),
				clustersPath: list("ray.io/v1", "RayCluster", cluster("run1-c", "c1", "run1", "RayJob/j1"), cluster("fake-c", "c9", "run1", "RayJob/j2")),
				podsPath:     list("v1", "Pod", pod("run1-c-head", "run1", "RayCluster/c1"), pod("fake-c-head", "run1", "RayCluster/c9")),
			},
			verdict: Running, clusters: []string{"run1-c"}, pods: []string{"run1-c-head"},
			problem: "RayCluster fake-c is not the run's: its owner RayJob (uid j2) is not one of the run's: ignored",
		},
		{
			name: "a Pod labelled with the run, of another run's RayCluster",
			cluster: fakeCluster{
				jobsPath:     list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Running")),
				clustersPath: list("ray.io/v1", "RayCluster", cluster("run1-c", "c1", "run1", "RayJob/j1")),
				podsPath:     list("v1", "Pod", pod("run1-c-head", "run1", "RayCluster/c1"), pod("x-head", "run1", "RayCluster/c2"), pod("run2-head", "run2", "RayCluster/c1")),
			},
			verdict: Running, clusters: []string{"run1-c"}, pods: []string{"run1-c-head"},
			problem: "1 Pod(s) found as the run's are not its: x-head (its owner RayCluster (uid c2) is not one of the run's): ignored",
		},
		{
			name: "KubeRay's head Service carries no run label: its owner ties it; a Pod claiming the cluster by label alone does not",
			cluster: fakeCluster{
				jobsPath:     list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Running")),
				clustersPath: list("ray.io/v1", "RayCluster", cluster("run1-c", "c1", "run1", "RayJob/j1")),
				"/api/v1/namespaces/ml/services": list("v1", "Service", `{"apiVersion":"v1","kind":"Service",`+
					strings.Replace(meta("run1-c-head-svc", "s1", "", "RayCluster/c1", ""), `"labels":{}`, `"labels":{"ray.io/cluster":"run1-c"}`, 1)+`,"spec":{"type":"ClusterIP"}}`),
				podsPath: list("v1", "Pod", strings.Replace(pod("squatter", "", ""), `"labels":{}`, `"labels":{"ray.io/cluster":"run1-c"}`, 1)),
			},
			verdict: Running, clusters: []string{"run1-c"}, services: []string{"run1-c-head-svc"},
			problem: "1 Pod(s) found as the run's are not its: squatter (labelled ray.io/cluster=run1-c, but no RayCluster owns it): ignored",
		},
		{
			name: "a RayCluster named by the RayJob without the run's label",
			cluster: fakeCluster{
				jobsPath:                 list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Initializing")),
				clustersPath + "/run1-c": cluster("run1-c", "c1", "", "RayJob/j1"),
			},
			verdict: Progressing, problem: "RayCluster run1-c named by RayJob run1 is not owned by it: ignored",
		},
		{
			name: "running with the stopped annotation is running",
			cluster: fakeCluster{
				jobsPath:     list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "run1-c", "Running")),
				clustersPath: list("ray.io/v1", "RayCluster", cluster("run1-c", "c1", "run1", "RayJob/j1")),
				podsPath:     list("v1", "Pod", pod("run1-c-head", "run1", "RayCluster/c1")),
			},
			verdict: Running, clusters: []string{"run1-c"}, pods: []string{"run1-c-head"}, summary: "RayJob run1 is Running",
		},
		{
			name:    "suspended without a Kueue queue is stopped",
			cluster: fakeCluster{jobsPath: list("ray.io/v1", "RayJob", job("run1", "j1", "run1", `,"suspend":true`, "", "Suspended"))},
			verdict: Stopped, summary: "the run is stopped (suspended, no Kueue queue): RayJob run1 (Suspended); no Pod runs",
		},
		{
			name: "suspended with a Kueue queue is not stopped",
			cluster: fakeCluster{jobsPath: list("ray.io/v1", "RayJob", strings.Replace(job("run1", "j1", "run1", `,"suspend":true`, "", "Suspended"),
				`"app.kubernetes.io/instance":"run1"`, `"app.kubernetes.io/instance":"run1","kueue.x-k8s.io/queue-name":"lq"`, 1))},
			verdict: Suspended, summary: "RayJob run1 is Suspended",
		},
		{
			name:    "a Kueue run left out: its other objects only",
			cluster: fakeCluster{"/apis/resource.nvidia.com/v1beta1/namespaces/ml/computedomains": list("resource.nvidia.com/v1beta1", "ComputeDomain", `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"ComputeDomain",`+meta("run1-cd", "d1", "run1", "", "")+`}`)},
			verdict: Stopped, summary: "no RayJob or RayCluster of the run, only ComputeDomain/run1-cd",
		},
	}
}

// A run's report holds only what the run owns: its label on the object
// AND KubeRay's owner reference (by UID) agree. A RayJob whose status
// names another run's RayCluster does not pull that cluster or its Pods
// in; a state annotation decides nothing.
func TestCollectReadsOnlyWhatTheRunOwns(t *testing.T) {
	for _, tc := range ownershipCases() {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Collect(context.Background(), conn(t, tc.cluster), "ml", "run1", time.Now())
			require.NoError(t, err)
			assert.Equal(t, tc.verdict, r.Verdict, r.Summary)
			assert.Contains(t, r.Summary, tc.summary)
			var clusters, pods []string
			for _, c := range r.RayClusters {
				clusters = append(clusters, c.Name)
			}
			for _, p := range r.Pods {
				pods = append(pods, p.Name)
			}
			assert.Equal(t, tc.clusters, clusters)
			assert.Equal(t, tc.pods, pods)
			var services []string
			for _, s := range r.Services {
				services = append(services, s.Name)
			}
			assert.Equal(t, tc.services, services)
			text := r.Text()
			if tc.problem != "" {
				assert.Contains(t, text, "NotOwned: "+tc.problem)
			}
			for _, other := range []string{"RayCluster run2-c:", "RayCluster fake-c:", "  run2-c-head (", "  fake-c-head (", "  x-head (", "  run2-head (", "  squatter ("} {
				assert.NotContains(t, text, other, "another run's object is never reported as this run's")
			}
		})
	}
}
