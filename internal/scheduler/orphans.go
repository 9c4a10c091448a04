package scheduler

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// collectOrphans stands in for the garbage collector's part a stream of
// runs needs (kube-controller-manager's garbagecollector): a Pod whose
// owning RayCluster is gone is deleted. A test deleting a run's Pods
// itself races KubeRay's RayCluster reconciler, whose cache may still hold
// the cluster and create a Pod after the test looked for the last time; an
// informer sees that Pod arrive.
func collectOrphans(ctx context.Context, env *operator.Env) error {
	return onPods(ctx, env, func(o *metav1.ListOptions) { o.LabelSelector = "ray.io/cluster" }, func(p *corev1.Pod) {
		if p.DeletionTimestamp != nil {
			return
		}
		for _, ref := range p.OwnerReferences {
			if ref.Kind != "RayCluster" {
				continue
			}
			var rc rayv1.RayCluster
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: ref.Name}, &rc)
			if apierrors.IsNotFound(err) || (err == nil && rc.UID != ref.UID) {
				_ = env.Client.Delete(ctx, p, client.GracePeriodSeconds(0)) // gone meanwhile: nothing to collect
			}
		}
	})
}
