package fluxapply

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// SpecOf is what a Kustomization object (as render-all generates it)
// tells the reconciler: its name and namespace, spec.prune, spec.force and
// spec.deletionPolicy.
func SpecOf(ks *unstructured.Unstructured) (Spec, error) {
	prune, _, err := unstructured.NestedBool(ks.Object, "spec", "prune")
	if err != nil {
		return Spec{}, err
	}
	force, _, err := unstructured.NestedBool(ks.Object, "spec", "force")
	if err != nil {
		return Spec{}, err
	}
	policy, _, err := unstructured.NestedString(ks.Object, "spec", "deletionPolicy")
	if err != nil {
		return Spec{}, err
	}
	return Spec{Name: ks.GetName(), Namespace: ks.GetNamespace(), Prune: prune, Force: force, DeletionPolicy: policy}, nil
}

// Build is kustomize's build of a Kustomization's spec.path in the
// repository checked out at root, without load restrictions, as
// kustomize-controller builds it; the objects decoded as the API server
// reads them (numbers as JSON numbers).
func Build(root string, ks *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	p, _, err := unstructured.NestedString(ks.Object, "spec", "path")
	if err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return nil, fmt.Errorf("Kustomization %s: %w", ks.GetName(), err)
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return fixtures.Decode(data)
}
