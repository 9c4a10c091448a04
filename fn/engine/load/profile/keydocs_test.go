package profile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryKeyDocumented: every key of the schema is documented and every
// documented key is one; each says what it does in a sentence and gives an
// example its key accepts, as the schema editors read judges a profile
// holding that key alone (the schema's types and enumerations are the
// loader's).
func TestEveryKeyDocumented(t *testing.T) {
	require.Empty(t, MissingDocs())
	s := compiledSchema(t)
	for key, d := range keyDocs() {
		t.Run(key, func(t *testing.T) {
			assert.True(t, strings.HasSuffix(d.desc, "."), "a sentence: %q", d.desc)
			require.NotEmpty(t, d.example)
			assert.NoError(t, s.Validate(instanceOf(t, profileAt(key, exampleValue(d.example)))))
		})
	}
}

// profileAt is a profile holding v at a documented key (a list item for
// [], a training cluster for <role>, a deployment x for <name>).
func profileAt(key string, v any) any {
	segs := strings.Split(strings.NewReplacer("<role>", "training", "<name>", "x").Replace(key), ".")
	for i := len(segs) - 1; i >= 0; i-- {
		name, list := strings.CutSuffix(segs[i], "[]")
		if list {
			v = []any{v}
		}
		v = map[string]any{name: v}
	}
	return v
}
