package rendered

import "github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"

// Destination is the cluster a rendered document is applied to.
type Destination string

const (
	// OneCluster: the run is not dispatched; every document goes to the
	// cluster that runs it.
	OneCluster Destination = ""
	// Manager: the job object MultiKueue queues on the manager cluster and
	// copies to the worker that admits it.
	Manager Destination = "manager"
	// Worker: what the run's Pods reference (ConfigMaps, DRA objects,
	// shared services): MultiKueue copies only the job object, so these go
	// to every worker the run may be dispatched to.
	Worker Destination = "worker"
)

// Dispatched reports whether d is a job object MultiKueue dispatches: a
// RayJob or RayCluster whose spec.managedBy is MultiKueue's.
func Dispatched(d Doc) bool {
	if d.Kind != "RayJob" && d.Kind != "RayCluster" {
		return false
	}
	spec, _ := d.Data["spec"].(map[string]any)
	by, _ := spec["managedBy"].(string)
	return by == vocab.MultiKueueControllerName
}

// Destinations is where each of docs goes, in order: when one of them is
// dispatched by MultiKueue, that one to the manager and every other to the
// workers; otherwise all to one cluster. It is the one rule of which
// object goes where.
func Destinations(docs []Doc) []Destination {
	multi := false
	for _, d := range docs {
		multi = multi || Dispatched(d)
	}
	return RunDestinations(docs, multi)
}

// RunDestinations is Destinations for a run whose profile says whether
// MultiKueue dispatches it (dispatched): a stopped dispatched run renders
// no job object, yet its documents are still the workers' bundle, and the
// manager gets none.
func RunDestinations(docs []Doc, dispatched bool) []Destination {
	out := make([]Destination, len(docs))
	if !dispatched {
		return out
	}
	for i, d := range docs {
		out[i] = Worker
		if Dispatched(d) {
			out[i] = Manager
		}
	}
	return out
}
