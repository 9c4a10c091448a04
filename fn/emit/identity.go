package emit

import (
	"fmt"
	"strings"
)

// ID is an object's identity on a cluster: group, kind, namespace, name.
// Two documents with one ID are one object, the later overwriting the
// earlier when applied.
func (d Doc) ID() string {
	group := ""
	if av, ok := d.Data["apiVersion"].(string); ok {
		if g, _, found := strings.Cut(av, "/"); found {
			group = g
		}
	}
	return group + "/" + d.Kind + "/" + d.Namespace + "/" + d.Name
}

// Describe names the object for messages: Kind namespace/name.
func (d Doc) Describe() string {
	if d.Namespace == "" {
		return d.Kind + " " + d.Name
	}
	return d.Kind + " " + d.Namespace + "/" + d.Name
}

// Owners records which run rendered each object of one invocation, so two
// runs that would apply the same object are caught before either is
// written: applied together, the later would silently replace the earlier.
type Owners map[string]string

// Claim records run's docs and returns one message per object another run
// already rendered, naming both runs; nothing is recorded when there is any.
func (o Owners) Claim(run string, docs []Doc) []string {
	var msgs []string
	for _, d := range docs {
		if prev, ok := o[d.ID()]; ok && prev != run {
			msgs = append(msgs, fmt.Sprintf("%s is also rendered by run %s; expected runs %s and %s to render distinct objects (give one a different name or namespace)", d.Describe(), prev, prev, run))
		}
	}
	if len(msgs) > 0 {
		return msgs
	}
	for _, d := range docs {
		o[d.ID()] = run
	}
	return nil
}
