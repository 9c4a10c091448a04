// Package fluxapply applies a run the way Flux's kustomize-controller
// reconciles a Kustomization, with the library it uses for it
// (github.com/fluxcd/pkg/ssa, configured as the controller configures it:
// field manager kustomize-controller, owner labels
// kustomize.toolkit.fluxcd.io/name and /namespace, ApplyAllStaged with
// spec.force, the inventory of what the last successful apply held, and
// pruning of what left it with DeleteAll, deletionPolicy on the
// Kustomization's deletion). The objects are what kustomize build of the
// Git path gives (Build, build.go). The tiers use it to show what a
// commit does to a running run (tests/flux).
//
// Test-only.
package fluxapply

import (
	"context"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Manager is kustomize-controller's field manager (its --controller-name
// default): every server-side apply it makes is recorded under it.
const Manager = "kustomize-controller"

// Group is the Kustomization API group; the owner labels, and the
// per-object opt-outs the controller honours, are keys under it.
const Group = "kustomize.toolkit.fluxcd.io"

// The deletion policies of a Kustomization (spec.deletionPolicy):
// what its finalizer does with the objects of its inventory.
const (
	// MirrorPrune, the default, deletes them when spec.prune is true.
	MirrorPrune = "MirrorPrune"
	// Delete deletes them whatever spec.prune says.
	Delete = "Delete"
	// Orphan leaves them in the cluster.
	Orphan = "Orphan"
)

// Spec is the part of a Kustomization's spec that decides what a
// reconcile does with the objects kustomize built.
type Spec struct {
	// Name and Namespace are the Kustomization's: the owner labels every
	// applied object gets, and the only objects a prune may delete.
	Name, Namespace string
	// TargetNamespace, when set, is the namespace every namespaced object
	// is placed in (spec.targetNamespace).
	TargetNamespace string
	// Prune deletes what the last successful apply held and this one does
	// not (spec.prune).
	Prune bool
	// Force deletes and re-creates an object whose apply is refused for an
	// immutable field (spec.force).
	Force bool
	// DeletionPolicy is spec.deletionPolicy ("" is MirrorPrune).
	DeletionPolicy string
}

// Kustomization is one Flux Kustomization's reconciler state: its spec and
// status.inventory.
type Kustomization struct {
	Spec
	c client.Client
	// inventory is status.inventory: what the last successful apply held.
	inventory []ref
}

// ref is an inventory entry: an object's identity and the API version
// it was applied with.
type ref struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// New is a Kustomization that applies through c (a client that can apply
// unstructured objects of every kind it will be given).
func New(c client.Client, spec Spec) *Kustomization {
	return &Kustomization{Spec: spec, c: c}
}

// manager is the ResourceManager as the controller creates it for a
// reconcile: its field manager, its owner group, a kstatus poller (the
// apply waits with it for Namespaces and CRDs of the build to be ready).
func (k *Kustomization) manager() *ssa.ResourceManager {
	poller := polling.NewStatusPoller(k.c, k.c.RESTMapper(), polling.Options{})
	return ssa.NewResourceManager(k.c, poller, ssa.Owner{Field: Manager, Group: Group})
}

// Reconcile is one reconcile of a new revision whose build is objects:
// objects are normalised and labelled as the controller labels them,
// applied in stages, and, when the apply succeeded and Prune is set, what
// the previous inventory held and objects do not is deleted. A failed
// apply returns its error and leaves the inventory and the cluster's
// other objects as they were (the controller returns before its
// inventory and prune steps). The change set is what was applied.
func (k *Kustomization) Reconcile(ctx context.Context, objects []*unstructured.Unstructured) (*ssa.ChangeSet, error) {
	objs := make([]*unstructured.Unstructured, 0, len(objects))
	for _, o := range objects {
		u := o.DeepCopy()
		if k.TargetNamespace != "" {
			namespaced, err := k.c.IsObjectNamespaced(u)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
			if namespaced {
				u.SetNamespace(k.TargetNamespace)
			}
		}
		objs = append(objs, u)
	}
	if err := normalize.UnstructuredList(objs); err != nil {
		return nil, err
	}
	m := k.manager()
	m.SetOwnerLabels(objs, k.Name, k.Namespace)
	changes := ssa.NewChangeSet()
	if len(objs) > 0 { // an empty build applies nothing and prunes everything
		applied, err := m.ApplyAllStaged(ctx, objs, applyOptions(k.Force))
		if err != nil {
			return applied, fmt.Errorf("Kustomization %s/%s: %w", k.Namespace, k.Name, err)
		}
		changes = applied
	}
	next := make([]ref, 0, len(changes.Entries))
	for _, e := range changes.Entries {
		next = append(next, ref{
			gvk:       e.ObjMetadata.GroupKind.WithVersion(e.GroupVersion),
			namespace: e.ObjMetadata.Namespace, name: e.ObjMetadata.Name,
		})
	}
	stale := diff(k.inventory, next)
	k.inventory = next
	if !k.Prune || len(stale) == 0 {
		return changes, nil
	}
	pruned, err := m.DeleteAll(ctx, stale, k.deleteOptions(m))
	if err != nil {
		// The controller keeps what it could not delete in its inventory
		// and retries at the next reconcile.
		k.inventory = append(k.inventory, survivors(stale, pruned)...)
		return changes, fmt.Errorf("Kustomization %s/%s: prune: %w", k.Namespace, k.Name, err)
	}
	changes.Append(pruned.Entries)
	return changes, nil
}

// Finalize is what the controller's finalizer does when the Kustomization
// is deleted: with deletionPolicy Delete (or MirrorPrune and Prune) it
// deletes every object of its inventory; with Orphan it deletes nothing.
// The change set names what was deleted (nil when nothing was).
func (k *Kustomization) Finalize(ctx context.Context) (*ssa.ChangeSet, error) {
	del := false
	switch k.DeletionPolicy {
	case Delete:
		del = true
	case Orphan:
	case MirrorPrune, "":
		del = k.Prune
	default:
		return nil, fmt.Errorf("Kustomization %s/%s: spec.deletionPolicy %q: expected one of %s, %s, %s",
			k.Namespace, k.Name, k.DeletionPolicy, MirrorPrune, Delete, Orphan)
	}
	inv := k.inventory
	k.inventory = nil
	if !del || len(inv) == 0 {
		return nil, nil
	}
	m := k.manager()
	return m.DeleteAll(ctx, objectsOf(inv), k.deleteOptions(m))
}

// Inventory is the identities the last successful apply held, as
// "Kind/namespace/name", sorted.
func (k *Kustomization) Inventory() []string {
	out := make([]string, 0, len(k.inventory))
	for _, r := range k.inventory {
		out = append(out, r.gvk.Kind+"/"+r.namespace+"/"+r.name)
	}
	sort.Strings(out)
	return out
}

// applyOptions are the controller's: its opt-out annotations and labels
// (kustomize.toolkit.fluxcd.io/reconcile: disabled, /ssa: Ignore,
// IfNotPresent, /force: Enabled), spec.force, and the cleanup of
// kubectl's and pre-SSA Flux's metadata and managers.
func applyOptions(force bool) ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.Force = force
	opts.ExclusionSelector = map[string]string{Group + "/reconcile": "disabled", Group + "/ssa": "Ignore"}
	opts.IfNotPresentSelector = map[string]string{Group + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{Group + "/force": "enabled"}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{"kubectl.kubernetes.io/last-applied-configuration",
			Group + "/checksum", "fluxcd.io/sync-checksum"},
		Labels: []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: Manager, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{Group + "/ssa": "Merge"},
	}
	return opts
}

// deleteOptions are the controller's for a prune and its finalizer: only
// objects labelled as this Kustomization's, not those opted out.
func (k *Kustomization) deleteOptions(m *ssa.ResourceManager) ssa.DeleteOptions {
	return ssa.DeleteOptions{
		PropagationPolicy: metav1.DeletePropagationBackground,
		Inclusions:        m.GetOwnerLabels(k.Name, k.Namespace),
		Exclusions: map[string]string{
			Group + "/prune": "disabled", Group + "/reconcile": "disabled", Group + "/ssa": "Ignore",
		},
	}
}

// diff is what old holds and next does not, as stubs DeleteAll reads
// (apiVersion, kind, namespace, name), in ssa's delete order.
func diff(old, next []ref) []*unstructured.Unstructured {
	held := map[string]bool{}
	for _, r := range next {
		held[r.key()] = true
	}
	var stale []ref
	for _, r := range old {
		if !held[r.key()] {
			stale = append(stale, r)
		}
	}
	return objectsOf(stale)
}

func objectsOf(refs []ref) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(refs))
	for _, r := range refs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.gvk)
		u.SetNamespace(r.namespace)
		u.SetName(r.name)
		out = append(out, u)
	}
	sort.Sort(ssa.SortableUnstructureds(out))
	return out
}

// key is the inventory's identity: group, kind, namespace, name (the
// version is not part of it).
func (r ref) key() string {
	return r.gvk.Group + "/" + r.gvk.Kind + "/" + r.namespace + "/" + r.name
}

// survivors are the objects of stale whose deletion the change set does
// not confirm (deleted, or skipped by an opt-out).
func survivors(stale []*unstructured.Unstructured, set *ssa.ChangeSet) []ref {
	settled := map[string]bool{}
	if set != nil {
		for _, e := range set.Entries {
			if e.Action == ssa.DeletedAction || e.Action == ssa.SkippedAction {
				settled[e.ObjMetadata.GroupKind.Group+"/"+e.ObjMetadata.GroupKind.Kind+"/"+e.ObjMetadata.Namespace+"/"+e.ObjMetadata.Name] = true
			}
		}
	}
	var out []ref
	for _, u := range stale {
		r := ref{gvk: u.GroupVersionKind(), namespace: u.GetNamespace(), name: u.GetName()}
		if !settled[r.key()] {
			out = append(out, r)
		}
	}
	return out
}
