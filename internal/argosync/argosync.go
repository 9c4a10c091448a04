// Package argosync holds what the operator and Kueue tiers prove about an
// Argo CD sync of a run, in the one place the tier tests and tests/gitops
// (which checks the shipped Application and ApplicationSet) both read: the
// field manager Argo CD applies as, and the managers of the controllers
// that write into a run's objects after that apply.
//
// Test-only.
package argosync

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manager is the field manager of Argo CD's application controller when
// it syncs with ServerSideApply=true (gitops-engine's default).
const Manager = "argocd-controller"

// ControllerManagers are the field managers the tiers observe writing
// into a run's objects once Argo CD applied them, sorted: KubeRay's
// operator (user agent "kuberay-operator/<version>": the RayJob's
// finalizer and status, an empty scaleStrategy in each worker group of a
// RayJob's rayClusterSpec, a RayCluster's status) and Kueue's manager
// (user agent "kueue/<version>": on admission, its pod-set labels and
// Workload annotation in the pod templates of the object it admits, a
// RayJob's rayClusterSpec or, in raycluster mode, a RayCluster's spec,
// whose spec.suspend: false it then owns too). Both writes into
// workerGroupSpecs, an atomic list in KubeRay's CRD, make the writer the
// owner of the whole list. The shipped Application's
// ignoreDifferences.managedFieldsManagers lists exactly these.
var ControllerManagers = []string{"kuberay-operator", "kueue"}

// Owners maps each field manager of fields to the field paths it owns
// (leaves, dotted, "status." for the status subresource's), sorted.
// Manager and subresource are joined as "manager/subresource".
func Owners(fields []metav1.ManagedFieldsEntry) (map[string][]string, error) {
	out := map[string][]string{}
	for _, f := range fields {
		if f.FieldsV1 == nil {
			continue
		}
		var tree map[string]any
		if err := json.Unmarshal(f.FieldsV1.GetRawBytes(), &tree); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", f.Manager, err)
		}
		key := f.Manager
		if f.Subresource != "" {
			key += "/" + f.Subresource
		}
		out[key] = append(out[key], leaves("", tree)...)
		slices.Sort(out[key])
	}
	return out, nil
}

// Managers are the distinct manager names of fields (subresource
// dropped), sorted.
func Managers(fields []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Manager)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Controllers are the managers of fields other than Argo CD (Manager),
// sorted: what a controller wrote into what Git holds.
func Controllers(fields []metav1.ManagedFieldsEntry) []string {
	return slices.DeleteFunc(Managers(fields), func(m string) bool { return m == Manager })
}

// leaves flattens a fieldsV1 tree ({"f:spec": {"f:suspend": {}}}) into
// dotted leaf paths ("spec.suspend"); "." marks the set itself and is
// dropped, list keys ("k:{...}", "v:...") stay as written.
func leaves(prefix string, tree map[string]any) []string {
	var out []string
	for k, v := range tree {
		if k == "." {
			continue
		}
		name := strings.TrimPrefix(k, "f:")
		if prefix != "" {
			name = prefix + "." + name
		}
		sub, _ := v.(map[string]any)
		if len(sub) == 0 || (len(sub) == 1 && sub["."] != nil) {
			out = append(out, name)
			continue
		}
		out = append(out, leaves(name, sub)...)
	}
	return out
}
