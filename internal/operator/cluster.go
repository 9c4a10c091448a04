package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster is what KubeRay created for one RayCluster.
type Cluster struct {
	RayCluster  *rayv1.RayCluster
	Head        corev1.Pod
	Workers     []corev1.Pod // sorted by name
	HeadService corev1.Service
	// WantWorkers is how many worker Pods KubeRay means to create: per
	// group its own desired replicas (GetWorkerGroupDesiredReplicas: the
	// count clamped to [min, max], 0 when suspended) times numOfHosts.
	WantWorkers int
}

// Pods is the head followed by the workers.
func (c *Cluster) Pods() []corev1.Pod { return append([]corev1.Pod{c.Head}, c.Workers...) }

// RefusedError is returned when KubeRay reported that it could not create
// an object of a cluster: the Events say what the API server refused and why.
type RefusedError struct {
	Namespace, Cluster string
	Events             []corev1.Event
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("KubeRay could not create the objects of RayCluster %s/%s:\n%s",
		e.Namespace, e.Cluster, strings.TrimRight(FormatEvents(e.Events), "\n"))
}

// WaitForCluster waits until RayCluster ns/name exists and KubeRay has
// created its head Pod, every worker Pod and the head Service, and returns
// them. If KubeRay reports a refusal (a FailedToCreate* Event in ns)
// first, it returns a *RefusedError naming it; a refusal that follows the
// last object still fails it, so a returned Cluster had nothing refused.
func (e *Env) WaitForCluster(ctx context.Context, ns, name string, timeout time.Duration) (*Cluster, error) {
	var got *Cluster
	err := Wait(ctx, timeout, fmt.Sprintf("KubeRay to create the Pods and head Service of RayCluster %s/%s", ns, name),
		func(ctx context.Context) (bool, string, error) {
			if err := e.refused(ctx, ns, name); err != nil {
				return false, "", err
			}
			c, state, err := e.observe(ctx, ns, name)
			if err != nil || c == nil {
				return false, state, err
			}
			got = c
			return true, "", nil
		})
	if err != nil {
		return nil, err
	}
	if err := e.refused(ctx, ns, name); err != nil {
		return nil, err
	}
	return got, nil
}

// refused returns a *RefusedError if ns holds a FailedToCreate* Event about
// RayCluster name or one of its objects, or about a RayJob (which reports
// the RayCluster it could not create on itself).
func (e *Env) refused(ctx context.Context, ns, name string) error {
	events, err := e.Events(ctx, ns)
	if err != nil {
		return err
	}
	var mine []corev1.Event
	for _, ev := range Refusals(events) {
		o := ev.InvolvedObject
		if o.Kind == "RayJob" || (o.Kind == "RayCluster" && o.Name == name) {
			mine = append(mine, ev)
		}
	}
	if len(mine) > 0 {
		return &RefusedError{Namespace: ns, Cluster: name, Events: mine}
	}
	return nil
}

// observe returns the Cluster once all of it exists, else nil and what is
// still missing.
func (e *Env) observe(ctx context.Context, ns, name string) (*Cluster, string, error) {
	rc := &rayv1.RayCluster{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "no RayCluster " + name, nil
		}
		return nil, "", err
	}
	c := &Cluster{RayCluster: rc}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		c.WantWorkers += int(rayutils.GetWorkerGroupDesiredReplicas(ctx, g) * max(g.NumOfHosts, 1))
	}
	var heads, workers corev1.PodList
	if err := e.Client.List(ctx, &heads, common.RayClusterHeadPodsAssociationOptions(rc).ToListOptions()...); err != nil {
		return nil, "", err
	}
	if err := e.Client.List(ctx, &workers, common.RayClusterWorkerPodsAssociationOptions(rc).ToListOptions()...); err != nil {
		return nil, "", err
	}
	svcName, err := rayutils.GenerateHeadServiceName(rayutils.RayClusterCRD, rc.Spec, rc.Name)
	if err != nil {
		return nil, "", err
	}
	var missing []string
	if len(heads.Items) != 1 {
		missing = append(missing, fmt.Sprintf("%d head Pods, want 1", len(heads.Items)))
	}
	if len(workers.Items) != c.WantWorkers {
		missing = append(missing, fmt.Sprintf("%d worker Pods, want %d", len(workers.Items), c.WantWorkers))
	}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: svcName}, &c.HeadService); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, "", err
		}
		missing = append(missing, "no head Service "+svcName)
	}
	if len(missing) > 0 {
		return nil, "RayCluster " + name + ": " + strings.Join(missing, ", "), nil
	}
	c.Head = heads.Items[0]
	c.Workers = workers.Items
	slices.SortFunc(c.Workers, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return c, "", nil
}

// RayClusterOf waits until KubeRay's RayJob reconciler has picked the
// RayCluster of RayJob ns/name (status.rayClusterName: the one it creates,
// or the one its clusterSelector names) and that RayCluster exists, and
// returns its name. The name alone is not enough: KubeRay names the cluster
// of a RayJob created suspended (as Kueue's webhook makes it) before it
// walks it to Suspended, which clears the name, and when Kueue unsuspends
// the RayJob in between, KubeRay creates the cluster under a new name (the
// cluster day's kday-034 was looked for under the first one).
func (e *Env) RayClusterOf(ctx context.Context, ns, name string, timeout time.Duration) (string, error) {
	var cluster string
	err := Wait(ctx, timeout, fmt.Sprintf("KubeRay to create the RayCluster of RayJob %s/%s", ns, name),
		func(ctx context.Context) (bool, string, error) {
			rj := &rayv1.RayJob{}
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rj); err != nil {
				return false, "", err
			}
			cluster = rj.Status.RayClusterName
			if cluster == "" {
				return false, "status.rayClusterName is empty", nil
			}
			err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rayv1.RayCluster{})
			if apierrors.IsNotFound(err) {
				return false, "RayCluster " + cluster + " not created yet", nil
			}
			return err == nil, "", err
		})
	return cluster, err
}

// WaitForJobDeploymentStatus waits until RayJob ns/name reaches status
// want and returns it; the timeout error names the status it is stuck in
// and the RayJob's Events (a clusterSelector that finds no cluster shows
// up there as RayClusterNotFound).
func (e *Env) WaitForJobDeploymentStatus(ctx context.Context, ns, name string, want rayv1.JobDeploymentStatus, timeout time.Duration) (*rayv1.RayJob, error) {
	rj := &rayv1.RayJob{}
	err := Wait(ctx, timeout, fmt.Sprintf("RayJob %s/%s to reach %s", ns, name, want),
		func(ctx context.Context) (bool, string, error) {
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rj); err != nil {
				return false, "", err
			}
			if rj.Status.JobDeploymentStatus == want {
				return true, "", nil
			}
			state := fmt.Sprintf("jobDeploymentStatus %q", rj.Status.JobDeploymentStatus)
			if events, err := e.Events(ctx, ns); err == nil {
				var about []corev1.Event
				for _, ev := range events {
					if ev.InvolvedObject.Kind == "RayJob" && ev.InvolvedObject.Name == name && ev.Type == corev1.EventTypeWarning {
						about = append(about, ev)
					}
				}
				if len(about) > 0 {
					state += "; events:\n" + FormatEvents(about)
				}
			}
			return false, state, nil
		})
	if err != nil {
		return nil, err
	}
	return rj, nil
}

// AsRefused reports whether err is (or wraps) a *RefusedError.
func AsRefused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}
