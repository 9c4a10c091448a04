package checkreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// Destinations is where a dispatched run's objects go: the object
// MultiKueue queues on the manager, and the bundle every worker needs
// because MultiKueue copies the job object only. Each is "Kind/name".
type Destinations struct {
	Manager []string `json:"manager"`
	Workers []string `json:"workers"`
}

// DestinationsOf reads rendered.Destinations of the documents; nil when
// the run is not dispatched (everything goes to one cluster).
func DestinationsOf(docs []rendered.Doc) *Destinations {
	var out *Destinations
	for i, dest := range rendered.Destinations(docs) {
		if dest == rendered.OneCluster {
			continue
		}
		if out == nil {
			out = &Destinations{Manager: []string{}, Workers: []string{}}
		}
		what := docs[i].Kind + "/" + docs[i].Name
		if dest == rendered.Manager {
			out.Manager = append(out.Manager, what)
		} else {
			out.Workers = append(out.Workers, what)
		}
	}
	return out
}

// Print writes the section of check's summary that says where each object
// goes; nothing for a run that is not dispatched.
func (d *Destinations) Print(w io.Writer) {
	if d == nil {
		return
	}
	fmt.Fprint(w, "\nDESTINATIONS (MultiKueue dispatches the run)\n------------\n")
	fmt.Fprintf(w, "  manager:      %s\n", strings.Join(d.Manager, ", "))
	workers := strings.Join(d.Workers, ", ")
	if workers == "" {
		workers = "(nothing)"
	}
	fmt.Fprintf(w, "  every worker: %s\n", workers)
}
