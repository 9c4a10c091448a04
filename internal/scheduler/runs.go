package scheduler

import (
	"context"
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Prepare creates ns (privileged: the GB300 workers need it), what the
// run's Pods need to be admitted and scheduled (their ServiceAccounts, and
// their PersistentVolumeClaims bound to PersistentVolumes, standing in for
// the PV controller), then applies the run in ns.
func Prepare(ctx context.Context, env *operator.Env, ns string, objs []*unstructured.Unstructured) error {
	if err := SetUp(ctx, env, ns, objs); err != nil {
		return err
	}
	return env.Apply(ctx, ns, objs)
}

// SetUp is Prepare without the apply: ns and what the run's Pods need,
// for a test that adds more (a LocalQueue) or asks preflight first.
func SetUp(ctx context.Context, env *operator.Env, ns string, objs []*unstructured.Unstructured) error {
	sas, pvcs := fixtures.References(objs)
	if err := env.SetUp(ctx, ns, "privileged", sas, nil); err != nil {
		return err
	}
	for _, name := range pvcs {
		if err := bindClaim(ctx, env.Client, ns, name); err != nil {
			return fmt.Errorf("bind PersistentVolumeClaim %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

// bindClaim creates claim ns/name bound to a volume of its own, as the PV
// controller binds them (pkg/controller/volume/persistentvolume): the claim
// annotated bind-completed, the volume's claimRef its UID.
func bindClaim(ctx context.Context, c client.Client, ns, name string) error {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}},
			VolumeName:  ns + "-" + name, StorageClassName: new(string),
		}}
	if err := c.Create(ctx, pvc); err != nil {
		return err
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Ti")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/" + name}},
		}}
	if err := c.Create(ctx, pv); err != nil {
		return err
	}
	pv.Status.Phase = corev1.VolumeBound
	if err := c.Status().Update(ctx, pv); err != nil {
		return err
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.Capacity = pv.Spec.Capacity
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	return c.Status().Update(ctx, pvc)
}

// Pods are the Pods of ns once KubeRay has created want of them.
func Pods(ctx context.Context, env *operator.Env, ns string, want int, timeout time.Duration) ([]corev1.Pod, error) {
	var out []corev1.Pod
	err := operator.Wait(ctx, timeout, fmt.Sprintf("KubeRay to create %d Pods in %s", want, ns),
		func(ctx context.Context) (bool, string, error) {
			var l corev1.PodList
			if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			out = l.Items
			return len(out) >= want, fmt.Sprintf("%d Pods", len(out)), nil
		})
	return out, err
}

// WaitScheduled waits until every one of the total Pods of ns is bound, or
// (pending > 0) until exactly that many stay unschedulable with the
// scheduler's reason. A timeout's error ends with the scheduler's log.
func (s *Scheduler) WaitScheduled(ctx context.Context, env *operator.Env, ns string, total, pending int, timeout time.Duration) ([]corev1.Pod, error) {
	var out []corev1.Pod
	err := operator.Wait(ctx, timeout, fmt.Sprintf("the scheduler to bind %d of %d Pods in %s", total-pending, total, ns),
		func(ctx context.Context) (bool, string, error) {
			var l corev1.PodList
			if err := env.Client.List(context.WithoutCancel(ctx), &l, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			out = l.Items
			bound, unschedulable, reason := 0, 0, ""
			for _, p := range out {
				switch {
				case p.Spec.NodeName != "":
					bound++
				case UnschedulableReason(p) != "":
					unschedulable++
					reason = p.Name + ": " + UnschedulableReason(p)
				}
			}
			return len(out) == total && bound == total-pending && unschedulable == pending,
				fmt.Sprintf("%d Pods, %d bound, %d unschedulable (%s)", len(out), bound, unschedulable, reason), nil
		})
	if err != nil {
		return out, fmt.Errorf("%w\nkube-scheduler log (tail):\n%s", err, fixtures.Tail(s.Log(), 4000))
	}
	return out, nil
}

// UnschedulableReason is the scheduler's PodScheduled=False message.
func UnschedulableReason(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// Teardown removes a run's objects and Pods from ns (nothing
// garbage-collects here): a Pending Pod of one test must not take the next
// test's nodes.
func Teardown(env *operator.Env, ns string) {
	ctx := context.Background()
	_ = env.Client.DeleteAllOf(ctx, &rayv1.RayJob{}, client.InNamespace(ns))
	_ = env.Client.DeleteAllOf(ctx, &rayv1.RayCluster{}, client.InNamespace(ns))
	_ = env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	_ = env.Client.DeleteAllOf(ctx, &resourcev1.ResourceClaim{}, client.InNamespace(ns))
}
