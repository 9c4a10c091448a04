package emit

import (
	"crypto/sha256"
	"encoding/json"
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

// Identity is what Owners needs of a document: its ID, its name for
// messages and a digest of its content.
type Identity struct {
	ID, Describe string
	Sum          [sha256.Size]byte
}

// Identify digests d (encoding/json sorts map keys, so equal objects give
// equal sums).
func Identify(d Doc) Identity {
	b, err := json.Marshal(d.Data)
	if err != nil {
		// Unencodable data is reported by the emitter; make it unequal to
		// anything rather than equal to every other failure.
		b = []byte(fmt.Sprintf("%p", d.Data))
	}
	return Identity{ID: d.ID(), Describe: d.Describe(), Sum: sha256.Sum256(b)}
}

// Identities identifies every document.
func Identities(docs []Doc) []Identity {
	out := make([]Identity, len(docs))
	for i, d := range docs {
		out[i] = Identify(d)
	}
	return out
}

// Owners records which run rendered each object of one invocation, so two
// runs that would apply different versions of one object are caught before
// either is written: applied together, the later would silently replace
// the earlier. An object two runs render byte-identically (a profile's
// shared service, docs/run-identity.md) is one object and no conflict.
type Owners map[string]owner

type owner struct {
	run string
	sum [sha256.Size]byte
}

// Claim records run's objects and returns one message per object another
// run already rendered differently, naming both runs; nothing is recorded
// when there is any.
func (o Owners) Claim(run string, ids []Identity) []string {
	var msgs []string
	for _, id := range ids {
		if prev, ok := o[id.ID]; ok && prev.run != run && prev.sum != id.Sum {
			msgs = append(msgs, fmt.Sprintf("%s is also rendered by run %s, differently; expected runs %s and %s to render distinct objects, or this one identically (give one a different name or namespace)", id.Describe, prev.run, prev.run, run))
		}
	}
	if len(msgs) > 0 {
		return msgs
	}
	for _, id := range ids {
		if _, ok := o[id.ID]; !ok {
			o[id.ID] = owner{run, id.Sum}
		}
	}
	return nil
}
