package build

// Label precedence (NRL_K8S_BEHAVIOUR.md §4.1 steps 4 and 6): every rule
// about which label wins lives here.

// ManagedByKey / ManagedByValue mark every object we render (the value is
// nrl-k8s's, so clusters that select on it keep working).
const (
	ManagedByKey   = "app.kubernetes.io/managed-by"
	ManagedByValue = "nrl-k8s"
)

// merged layers maps, later ones winning; nil when the result is empty.
func merged(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

var managedBy = map[string]string{ManagedByKey: ManagedByValue}

// objectLabels: managed-by, then profile labels, then the object's own
// (cluster or deployment) labels, then extra; later wins, so a user may
// override managed-by.
func objectLabels(profile, own, extra map[string]string) map[string]string {
	return merged(managedBy, profile, own, extra)
}

// podLabels: as objectLabels, but labels already on the pod template win.
func podLabels(profile, own, existing map[string]string) map[string]string {
	return merged(managedBy, profile, own, existing)
}

// objectAnnotations: profile annotations, then the object's own; nil if
// empty. Annotations never propagate to pods.
func objectAnnotations(profile, own map[string]string) map[string]string {
	return merged(profile, own)
}

// draLabels: DRA objects carry managed-by only (no profile labels).
func draLabels() map[string]string { return merged(managedBy) }
