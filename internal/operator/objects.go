package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
)

// EnforceLabel is the namespace label PodSecurity admission enforces.
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// CreateNamespace creates namespace ns and its "default" ServiceAccount
// (what kube-controller-manager does in a cluster; with ServiceAccount
// admission on, a Pod naming no ServiceAccount needs it). A non-empty
// podSecurity ("privileged", "baseline", "restricted") labels it
// pod-security.kubernetes.io/enforce=<podSecurity>.
func (e *Env) CreateNamespace(ctx context.Context, ns, podSecurity string) error {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if podSecurity != "" {
		n.Labels = map[string]string{EnforceLabel: podSecurity}
	}
	if err := e.Client.Create(ctx, n); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return e.CreateServiceAccount(ctx, ns, "default")
}

// CreateServiceAccount creates ServiceAccount ns/name unless it exists, as
// a user does before applying a run that names it.
func (e *Env) CreateServiceAccount(ctx context.Context, ns, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ServiceAccount %s/%s: %w", ns, name, err)
	}
	return nil
}

// SetUp creates namespace ns (enforcing podSecurity when set) and the
// ServiceAccounts sas in it, then applies objs into it: a run set up as a
// user sets it up.
func (e *Env) SetUp(ctx context.Context, ns, podSecurity string, sas []string, objs []*unstructured.Unstructured) error {
	if err := e.CreateNamespace(ctx, ns, podSecurity); err != nil {
		return err
	}
	for _, sa := range sas {
		if err := e.CreateServiceAccount(ctx, ns, sa); err != nil {
			return err
		}
	}
	return e.Apply(ctx, ns, objs)
}

// Apply server-side applies objs, in order, into namespace ns (a namespaced
// object's own namespace is replaced, so one rendered stream can be applied
// into several namespaces side by side). The first refusal stops it; the
// error names the object and carries the server's.
func (e *Env) Apply(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
	return e.ApplyAs(ctx, ns, apiserver.FieldManager, objs)
}

// ApplyAs is Apply with field manager manager, forcing conflicts (as
// `kubectl apply --server-side --force-conflicts` and Argo CD's
// ServerSideApply sync do).
func (e *Env) ApplyAs(ctx context.Context, ns, manager string, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		u, err := e.into(ns, o)
		if err != nil {
			return err
		}
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(manager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), ns, u.GetName(), err)
		}
	}
	return nil
}

// Sync is an Argo CD sync with pruning, as the shipped Application makes
// it (gitops/argocd/application.yaml: ServerSideApply, prune): next, the
// run as Git now holds it, is applied as manager (conflicts forced), and
// every object of prev, what the Application synced before, that next no
// longer holds is deleted (background propagation, as Argo CD prunes).
// Objects already gone are not an error.
func (e *Env) Sync(ctx context.Context, ns, manager string, prev, next []*unstructured.Unstructured) error {
	if err := e.ApplyAs(ctx, ns, manager, next); err != nil {
		return err
	}
	held := map[string]bool{}
	for _, o := range next {
		held[o.GroupVersionKind().GroupKind().String()+"/"+o.GetName()] = true
	}
	for _, o := range prev {
		if held[o.GroupVersionKind().GroupKind().String()+"/"+o.GetName()] {
			continue
		}
		u, err := e.into(ns, o)
		if err != nil {
			return err
		}
		if err := e.Client.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("prune %s %s/%s: %w", u.GetKind(), ns, u.GetName(), err)
		}
	}
	return nil
}

// into is a copy of rendered object o placed in namespace ns when its kind
// is namespaced (one rendered stream applied into several namespaces side
// by side).
func (e *Env) into(ns string, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := o.DeepCopy()
	namespaced, err := e.Client.IsObjectNamespaced(u)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if namespaced {
		u.SetNamespace(ns)
	}
	return u, nil
}

// Live is rendered object o as the server holds it in ns.
func (e *Env) Live(ctx context.Context, ns string, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := e.into(ns, o)
	if err != nil {
		return nil, err
	}
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", u.GetKind(), ns, u.GetName(), err)
	}
	return u, nil
}

// CollectOrphans deletes the objects in ns whose owning RayCluster or
// RayJob is gone: Pods (of a cluster KubeRay deleted, a suspended or
// finished RayJob's) and Kueue's Workloads (of a deleted RayJob), what
// kube-controller-manager's garbage collector, which this tier does not
// run, does. A kind the server does not serve (Kueue not installed) is
// skipped.
func (e *Env) CollectOrphans(ctx context.Context, ns string) error {
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "PodList"},
		{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Kind: "WorkloadList"},
	} {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk)
		if err := e.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("list %s in %s: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			gone, err := e.ownerGone(ctx, ns, list.Items[i].GetOwnerReferences())
			if err != nil {
				return err
			}
			if !gone {
				continue
			}
			if err := e.Client.Delete(ctx, &list.Items[i], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("collect %s %s/%s: %w", list.Items[i].GetKind(), ns, list.Items[i].GetName(), err)
			}
		}
	}
	return nil
}

// ownerGone says a RayCluster or RayJob among refs no longer exists (or is
// another object of the same name).
func (e *Env) ownerGone(ctx context.Context, ns string, refs []metav1.OwnerReference) (bool, error) {
	for _, ref := range refs {
		if ref.Kind != "RayCluster" && ref.Kind != "RayJob" {
			continue
		}
		owner := &unstructured.Unstructured{}
		owner.SetAPIVersion(ref.APIVersion)
		owner.SetKind(ref.Kind)
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, owner)
		if apierrors.IsNotFound(err) || (err == nil && owner.GetUID() != ref.UID) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// PodUIDs are the UIDs of the Pods in namespace ns, sorted: what a test
// compares to tell a Pod recreated from one left alone.
func (e *Env) PodUIDs(ctx context.Context, ns string) ([]types.UID, error) {
	var list corev1.PodList
	if err := e.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list Pods in %s: %w", ns, err)
	}
	out := make([]types.UID, 0, len(list.Items))
	for _, p := range list.Items {
		out = append(out, p.UID)
	}
	slices.Sort(out)
	return out, nil
}

// Events returns the Events of namespace ns, oldest first.
func (e *Env) Events(ctx context.Context, ns string) ([]corev1.Event, error) {
	var list corev1.EventList
	if err := e.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list Events in %s: %w", ns, err)
	}
	out := list.Items
	slices.SortStableFunc(out, func(a, b corev1.Event) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out, nil
}

// Refusals are the Events in which KubeRay reports that it could not
// create an object (reasons FailedToCreate*: FailedToCreateWorkerPod,
// FailedToCreateHeadPod, FailedToCreateService, FailedToCreateRayCluster...).
func Refusals(events []corev1.Event) []corev1.Event {
	var out []corev1.Event
	for _, ev := range events {
		// "already exists" is KubeRay racing its own informer cache (a
		// second create of an object it just made), which it retries: not
		// a refusal.
		if strings.HasPrefix(ev.Reason, "FailedToCreate") && !strings.HasSuffix(ev.Message, "already exists") {
			out = append(out, ev)
		}
	}
	return out
}

// FormatEvents renders events one a line: reason, object, message.
func FormatEvents(events []corev1.Event) string {
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "%s %s/%s: %s\n", ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Message)
	}
	return b.String()
}

// MarkRunningReady sets pods' phase to Running with a true Ready condition,
// what a kubelet would report once their containers start (envtest has no
// kubelet; KubeRay's suite does the same). KubeRay then counts them ready:
// a RayCluster whose Pods all are becomes Ready.
func (e *Env) MarkRunningReady(ctx context.Context, pods []corev1.Pod) error {
	for _, p := range pods {
		key := client.ObjectKeyFromObject(&p)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur corev1.Pod
			if err := e.Client.Get(ctx, key, &cur); err != nil {
				return err
			}
			now := metav1.Now()
			cur.Status.Phase = corev1.PodRunning
			cur.Status.StartTime = &now
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
			return e.Client.Status().Update(ctx, &cur)
		})
		if err != nil {
			return fmt.Errorf("mark Pod %s Running and Ready: %w", key, err)
		}
	}
	return nil
}

// waitTick is how often Wait polls: 100 ms unless PollEvery changed it.
var waitTick = func() *atomic.Int64 {
	var v atomic.Int64
	v.Store(int64(100 * time.Millisecond))
	return &v
}()

// PollEvery makes Wait poll every d until the returned function restores
// the previous interval. A stream of a thousand waits (the cluster day)
// loses half a tick to each; a test whose waits are that many polls
// faster, at the price of more reads of the API server.
func PollEvery(d time.Duration) (restore func()) {
	old := waitTick.Swap(int64(d))
	return func() { waitTick.Store(old) }
}

// Wait polls cond until it reports done, fails, or timeout passes. The
// timeout error says what was awaited and the last state cond described,
// so a stuck wait names what was missing.
func Wait(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (done bool, state string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Duration(waitTick.Load()))
	defer tick.Stop()
	state := "nothing observed yet"
	for {
		done, s, err := cond(ctx)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		if s != "" {
			state = s
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", timeout, what, state)
		case <-tick.C:
		}
	}
}
