package scheduler

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return onPods(ctx, env, func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }, func(p *corev1.Pod) {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
			return
		}
		_ = env.MarkRunningReady(ctx, []corev1.Pod{*p}) // gone meanwhile: nothing to mark
	})
}

// onPods calls fn with each Pod the selection (tweak) holds, as it is
// added or changed, until ctx ends.
func onPods(ctx context.Context, env *operator.Env, tweak func(*metav1.ListOptions), fn func(*corev1.Pod)) error {
	cs, err := kubernetes.NewForConfig(env.Server.Config)
	if err != nil {
		return err
	}
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "pods", corev1.NamespaceAll, tweak)
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 10*time.Minute, cache.Indexers{})
	call := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			fn(p)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    call,
		UpdateFunc: func(_, obj any) { call(obj) },
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	return nil
}
