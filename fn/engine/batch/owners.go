package batch

import (
	"crypto/sha256"
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// owners records which run rendered each object of one invocation, so two
// runs that would apply different versions of one object are caught before
// either is written: applied together, the later would silently replace
// the earlier. An object two runs render byte-identically (a profile's
// shared service, docs/run-identity.md) is one object and no conflict.
type owners map[string]owner

type owner struct {
	run string
	sum [sha256.Size]byte
}

// claim records run's objects and returns one message per object another
// run already rendered differently, naming both runs; nothing is recorded
// when there is any.
func (o owners) claim(run string, ids []rendered.Identity) []string {
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
