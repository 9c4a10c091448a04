package scheduler

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// markReady stands in for the kubelet of every node, event-driven: an
// informer on bound Pods (spec.nodeName set) marks each one Running and
// Ready (operator.MarkRunningReady) as soon as the scheduler binds it, so
// KubeRay sees its cluster ready and submits the job, as on a cluster.
// A watch, not a poll: on 1,000 nodes and hundreds of Pods a list every
// 100 ms would cost the API server more than the run it serves.
func markReady(ctx context.Context, env *operator.Env) error {
	cs, err := kubernetes.NewForConfig(env.Server.Config)
	if err != nil {
		return err
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", corev1.NamespaceAll,
		fields.OneTermNotEqualSelector("spec.nodeName", ""))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 10*time.Minute, cache.Indexers{})
	mark := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
			return
		}
		_ = env.MarkRunningReady(ctx, []corev1.Pod{*p}) // gone meanwhile: nothing to mark
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    mark,
		UpdateFunc: func(_, obj any) { mark(obj) },
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	return nil
}
