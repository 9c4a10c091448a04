package kueue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// dispatch reads where MultiKueue sent a Workload on a manager cluster:
// status.clusterName, the MultiKueueCluster whose copy reserved quota
// (Kueue v0.17.0 apis/kueue/v1beta2 workload_types.go), kept only if it is
// a valid object name; and, while the Workload is not admitted, its
// admission checks that are not Ready, with their bounded messages (a
// lost worker: "Reserving remote lost").
func dispatch(a *scheduler.Admission, wl *unstructured.Unstructured) {
	name, _, _ := unstructured.NestedString(wl.Object, "status", "clusterName")
	if name != "" && len(validation.IsDNS1123Subdomain(name)) == 0 {
		a.Worker = name
	}
	if a.State != scheduler.AdmissionQueued && a.State != scheduler.AdmissionReserved {
		return
	}
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	var notes []string
	for _, c := range checks {
		m, _ := c.(map[string]any)
		state, _ := m["state"].(string)
		if state == "" || state == "Ready" {
			continue
		}
		check, _ := m["name"].(string)
		msg, _ := m["message"].(string)
		notes = append(notes, strings.TrimSuffix(fmt.Sprintf("admission check %s %s: %s", bound(check), bound(state), bound(msg)), ": "))
	}
	if len(notes) > 0 {
		a.Message = strings.TrimPrefix(a.Message+"; "+strings.Join(notes, "; "), "; ")
	}
}

func bound(s string) string { return scheduler.Bound(s) }
