package kueue

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// A MultiKueue manager's setup, read as Kueue v0.17.0 defines it
// (apis/kueue/v1beta2 admissioncheck_types.go, multikueue_types.go,
// clusterqueue_types.go): the readers preflight judges the manager with.
// The objects come from a cluster and are read by name, never trusted to
// hold what they should.

// SystemNamespace is where Kueue's manager runs unless its Configuration
// says otherwise, and so where MultiKueue reads a worker's kubeconfig
// Secret (locationType Secret).
const SystemNamespace = "kueue-system"

// KubeconfigKey is the key of that Secret MultiKueue reads.
const KubeconfigKey = "kubeconfig"

// Active reads an object's Active condition (AdmissionCheck,
// MultiKueueCluster, ClusterQueue): whether it is True and, when not,
// Kueue's reason and message, bounded.
func Active(u *unstructured.Unstructured) (bool, string) {
	c, ok := conditions(u)["Active"]
	if !ok {
		return false, "no Active condition yet"
	}
	if c.status == "True" {
		return true, ""
	}
	return false, strings.TrimSuffix(bound(c.reason)+": "+bound(c.message), ": ")
}

// QueueChecks are the AdmissionChecks a ClusterQueue gates admission on
// (spec.admissionChecksStrategy.admissionChecks[].name).
func QueueChecks(cq *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(cq.Object, "spec", "admissionChecksStrategy", "admissionChecks")
	var out []string
	for _, r := range rules {
		m, _ := r.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// MultiKueueCheck reads an AdmissionCheck: whether its controller is
// MultiKueue's, and the MultiKueueConfig its parameters name ("" when they
// name none or another kind).
func MultiKueueCheck(ac *unstructured.Unstructured) (multikueue bool, config string) {
	controller, _, _ := unstructured.NestedString(ac.Object, "spec", "controllerName")
	if controller != vocab.MultiKueueControllerName {
		return false, ""
	}
	p, _, _ := unstructured.NestedStringMap(ac.Object, "spec", "parameters")
	if p["apiGroup"] != vocab.KueueGroup || p["kind"] != "MultiKueueConfig" {
		return true, ""
	}
	return true, p["name"]
}

// ConfigClusters are the MultiKueueClusters a MultiKueueConfig lists.
func ConfigClusters(cfg *unstructured.Unstructured) []string {
	names, _, _ := unstructured.NestedStringSlice(cfg.Object, "spec", "clusters")
	return names
}

// KubeconfigSecret is the Secret a MultiKueueCluster's kubeconfig is in
// (clusterSource.kubeConfig with locationType Secret, the default), or
// where else it comes from when not a Secret ("Path", a ClusterProfile).
func KubeconfigSecret(mkc *unstructured.Unstructured) (secret, elsewhere string) {
	kc, ok, _ := unstructured.NestedStringMap(mkc.Object, "spec", "clusterSource", "kubeConfig")
	if !ok {
		if profile, _, _ := unstructured.NestedString(mkc.Object, "spec", "clusterSource", "clusterProfileRef", "name"); profile != "" {
			return "", "ClusterProfile " + bound(profile)
		}
		return "", "no spec.clusterSource"
	}
	if t := kc["locationType"]; t != "" && t != "Secret" {
		return "", "locationType " + bound(t) + " " + bound(kc["location"])
	}
	return kc["location"], ""
}
