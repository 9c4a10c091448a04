package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
	utiltypes "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Submission is one job KubeRay's RayJob reconciler submitted to a Ray
// cluster's dashboard (HTTPMode: the reconciler itself posts the job).
type Submission struct {
	// Namespace and Cluster name the RayCluster whose dashboard got the
	// job: the one the RayJob's clusterSelector names, or the one KubeRay
	// created for it.
	Namespace, Cluster string
	RayJob, JobID      string
	Entrypoint         string
}

// Dashboard stands in for every Ray cluster's dashboard: a job is unknown
// (the dashboard's 400, which makes an HTTPMode RayJob submit it) until
// submitted, then RUNNING until a test ends it (Finish). It records each submission. It is KubeRay's
// utils.ClientProvider, handed to its RayJob reconciler.
type Dashboard struct {
	mu   sync.Mutex
	jobs []Submission
	// ended holds the final status a test gave a cluster's jobs (Finish).
	ended map[string]rayv1.JobStatus
}

// NewDashboard returns an empty Dashboard.
func NewDashboard() *Dashboard { return &Dashboard{} }

var _ rayutils.ClientProvider = (*Dashboard)(nil)

// GetDashboardClient implements rayutils.ClientProvider.
func (d *Dashboard) GetDashboardClient(manager.Manager) func(*rayv1.RayCluster, string) (dashboardclient.RayDashboardClientInterface, error) {
	return func(rc *rayv1.RayCluster, _ string) (dashboardclient.RayDashboardClientInterface, error) {
		return &clusterDashboard{FakeRayDashboardClient: &rayutils.FakeRayDashboardClient{}, d: d, ns: rc.Namespace, cluster: rc.Name}, nil
	}
}

// GetHttpProxyClient implements rayutils.ClientProvider (RayService only).
func (d *Dashboard) GetHttpProxyClient( //nolint:revive // var-naming: the name is KubeRay's interface method
	manager.Manager) func(string, string, string, int) rayutils.RayHttpProxyClientInterface {
	return func(string, string, string, int) rayutils.RayHttpProxyClientInterface {
		return &rayutils.FakeRayHttpProxyClient{}
	}
}

// Submissions returns the jobs submitted to clusters in namespace ns,
// sorted by RayJob name.
func (d *Dashboard) Submissions(ns string) []Submission {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Submission
	for _, s := range d.jobs {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Submission) int { return strings.Compare(a.RayJob, b.RayJob) })
	return out
}

// Finish makes every job on cluster ns/name report status from now on (a
// Ray job ending, e.g. rayv1.JobStatusSucceeded): KubeRay's RayJob
// reconciler then completes the RayJob and applies its deletion policy.
func (d *Dashboard) Finish(ns, cluster string, status rayv1.JobStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended == nil {
		d.ended = map[string]rayv1.JobStatus{}
	}
	d.ended[ns+"/"+cluster] = status
}

// statusOf is a submitted job's status: RUNNING until Finish.
func (d *Dashboard) statusOf(ns, cluster string) rayv1.JobStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.ended[ns+"/"+cluster]; ok {
		return s
	}
	return rayv1.JobStatusRunning
}

func (d *Dashboard) submitted(ns, cluster, jobID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.ContainsFunc(d.jobs, func(s Submission) bool {
		return s.Namespace == ns && s.Cluster == cluster && s.JobID == jobID
	})
}

// clusterDashboard is one cluster's dashboard; what it does not override
// is KubeRay's own fake.
type clusterDashboard struct {
	*rayutils.FakeRayDashboardClient
	d           *Dashboard
	ns, cluster string
}

func (c *clusterDashboard) GetJobInfo(_ context.Context, jobID string) (*utiltypes.RayJobInfo, error) {
	if !c.d.submitted(c.ns, c.cluster, jobID) {
		// What KubeRay's HTTP client returns for the dashboard's 404.
		return nil, apierrors.NewBadRequest("Job " + jobID + " does not exist on the cluster")
	}
	return &utiltypes.RayJobInfo{JobId: jobID, JobStatus: c.d.statusOf(c.ns, c.cluster)}, nil
}

func (c *clusterDashboard) SubmitJob(_ context.Context, rj *rayv1.RayJob) (string, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.jobs = append(c.d.jobs, Submission{
		Namespace: c.ns, Cluster: c.cluster,
		RayJob: rj.Name, JobID: rj.Status.JobId, Entrypoint: rj.Spec.Entrypoint,
	})
	return rj.Status.JobId, nil
}

// EndedAnnotation is what EndJob writes on a RayJob to wake KubeRay.
const EndedAnnotation = "test.nrl-k8s.dev/ray-job-ended"

// EndJob ends the Ray job of RayJob ns/job on cluster with status
// (Dashboard.Finish) and wakes KubeRay's RayJob reconciler by annotating
// the RayJob: it reads the dashboard when an event or its requeue comes
// (RayJobDefaultRequeueDuration, 3 s, in KubeRay v1.5.0's
// controllers/ray/rayjob_controller.go), and a dashboard does not send
// events. Without the annotation a run ends 1.5 s later on average.
func (e *Env) EndJob(ctx context.Context, ns, job, cluster string, status rayv1.JobStatus) error {
	e.Dashboard.Finish(ns, cluster, status)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, EndedAnnotation, status)
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job}}
	return e.Client.Patch(ctx, rj, client.RawPatch(types.MergePatchType, patch))
}
