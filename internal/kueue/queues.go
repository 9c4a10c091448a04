package kueue

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Flavor is the ResourceFlavor every ClusterQueue of Queue offers.
const Flavor = "nrl-default-flavor"

// Queue creates namespace ns (enforcing baseline) unless it exists, a
// ClusterQueue cq with gpus nvidia.com/gpu of nominal quota (CPU and
// memory plenty) and the LocalQueue local in ns pointing at it, and waits
// until the ClusterQueue is active.
func Queue(ctx context.Context, env *operator.Env, ns, local, cq, gpus string, timeout time.Duration) error {
	return PreemptingQueue(ctx, env, ns, local, cq, gpus, nil, timeout)
}

// PreemptingQueue is Queue with more of the ClusterQueue's spec (its
// preemption policy, cohortName): nil is Kueue's defaults, never preempt
// and no cohort.
func PreemptingQueue(ctx context.Context, env *operator.Env, ns, local, cq, gpus string, more map[string]any, timeout time.Duration) error {
	if err := env.CreateNamespace(ctx, ns, "baseline"); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	objs := []map[string]any{
		{"apiVersion": vocab.KueueAPIVersion, "kind": "ResourceFlavor", "metadata": map[string]any{"name": Flavor}},
		{"apiVersion": vocab.KueueAPIVersion, "kind": "ClusterQueue", "metadata": map[string]any{"name": cq},
			"spec": map[string]any{
				"namespaceSelector": map[string]any{},
				"resourceGroups": []any{map[string]any{
					"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
					"flavors": []any{map[string]any{"name": Flavor, "resources": []any{
						map[string]any{"name": "cpu", "nominalQuota": "1000"},
						map[string]any{"name": "memory", "nominalQuota": "100Ti"},
						map[string]any{"name": "nvidia.com/gpu", "nominalQuota": gpus},
					}}},
				}},
			}},
		{"apiVersion": vocab.KueueAPIVersion, "kind": "LocalQueue", "metadata": map[string]any{"name": local, "namespace": ns},
			"spec": map[string]any{"clusterQueue": cq}},
	}
	spec, _ := objs[1]["spec"].(map[string]any)
	for k, v := range more {
		spec[k] = v
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o}
		if err := env.Server.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return operator.Wait(ctx, timeout, "ClusterQueue "+cq+" active", func(ctx context.Context) (bool, string, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(vocab.KueueAPIVersion)
		u.SetKind("ClusterQueue")
		if err := env.Server.Client.Get(ctx, client.ObjectKey{Name: cq}, u); err != nil {
			return false, "", err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Active" {
				return m["status"] == "True", fmt.Sprintf("Active=%v %v", m["status"], m["message"]), nil
			}
		}
		return false, "no Active condition", nil
	})
}

// Workload is the Workload Kueue made for job (as the server holds it),
// once it exists.
func Workload(ctx context.Context, env *operator.Env, job client.Object, timeout time.Duration) (*unstructured.Unstructured, error) {
	var wl *unstructured.Unstructured
	err := operator.Wait(ctx, timeout, "Kueue's Workload for "+job.GetName(), func(ctx context.Context) (bool, string, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(vocab.KueueAPIVersion)
		l.SetKind("WorkloadList")
		if err := env.Server.Client.List(ctx, l, client.InNamespace(job.GetNamespace()), client.MatchingLabels{vocab.KueueJobUIDLabel: string(job.GetUID())}); err != nil {
			return false, "", err
		}
		if len(l.Items) == 0 {
			return false, "none yet", nil
		}
		wl = &l.Items[0]
		return true, "", nil
	})
	return wl, err
}

// PriorityClass creates the WorkloadPriorityClass name of value unless it
// exists.
func PriorityClass(ctx context.Context, env *operator.Env, name string, value int64) error {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": vocab.KueueAPIVersion, "kind": "WorkloadPriorityClass", "metadata": map[string]any{"name": name}, "value": value}}
	if err := env.Server.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create WorkloadPriorityClass %s: %w", name, err)
	}
	return nil
}

// RefreshedAnnotation is what RefreshStatus writes on a ClusterQueue.
const RefreshedAnnotation = "test.nrl-k8s.dev/status-refreshed"

// RefreshStatus has Kueue write ClusterQueue cq's status now. Kueue
// reconciles a ClusterQueue a second after a Workload of it changes
// (constants.UpdatesBatchPeriod, pkg/controller/core/
// clusterqueue_controller.go in v0.17.0), but at once when the
// ClusterQueue itself changes (its Update handler returns true): a
// changed annotation wakes it, and the status it writes is its cache's
// counts as they are. Neither the queue manager nor the cache acts on a
// change outside the spec (UpdateClusterQueue requeues nothing unless
// the spec changed), so what Kueue decides is unchanged; a harness waiting
// for the status to show a decision waits for the decision, not the
// batch period.
func RefreshStatus(ctx context.Context, env *operator.Env, cq string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"%d"}}}`, RefreshedAnnotation, refreshes.Add(1))
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(vocab.KueueAPIVersion)
	u.SetKind("ClusterQueue")
	u.SetName(cq)
	return env.Server.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch))
}

// refreshes makes each RefreshStatus's annotation new (an unchanged
// object sends no event).
var refreshes atomic.Int64

// Counts is what ClusterQueue cq's status counts: the Workloads reserving
// its quota and those pending for it.
func Counts(ctx context.Context, env *operator.Env, cq string) (reserving, pending int64, err error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(vocab.KueueAPIVersion)
	u.SetKind("ClusterQueue")
	if err := env.Server.Client.Get(ctx, client.ObjectKey{Name: cq}, u); err != nil {
		return 0, 0, err
	}
	reserving, _, _ = unstructured.NestedInt64(u.Object, "status", "reservingWorkloads")
	pending, _, _ = unstructured.NestedInt64(u.Object, "status", "pendingWorkloads")
	return reserving, pending, nil
}
