package rendered

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

// Identity is what the batch renderer's collision rule needs of a
// document: its ID, its name for messages and a digest of its content.
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
