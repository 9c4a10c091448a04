package runstatus

import (
	"fmt"
)

// followDispatch says, on a manager cluster, where a dispatched run's Pods
// are: MultiKueue copies the job object to a worker, whose KubeRay makes
// them there, so none are here.
func followDispatch(r *Report) {
	if len(r.Pods) > 0 {
		return
	}
	for _, a := range r.Admissions {
		if a.Worker != "" {
			r.Summary += fmt.Sprintf("; %s was dispatched by MultiKueue to worker cluster %s: its Pods are there (run status against that cluster)", a.Object, a.Worker)
			return
		}
	}
}
