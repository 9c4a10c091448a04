package tree_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// TestToYAML: the tree as YAML in its own key order, a multi-line string
// as a block, and every scalar written so that Parse (and PyYAML) reads
// back the same value.
func TestToYAML(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"key order kept", "b: 1\na: [x, {c: d}]\n", "b: 1\na:\n  - x\n  - c: d\n"},
		{"a block", "e: \"a\\nb\\n\"\n", "e: |\n  a\n  b\n"},
		{"YAML 1.1 booleans as strings", "a: 'yes'\nb: 'off'\nc: true\n", "a: \"yes\"\nb: \"off\"\nc: true\n"},
		{"numbers and null", "i: -3\nf: 1.5e-5\ns: '3'\nn: null\n", "i: -3\nf: 1.5e-05\ns: \"3\"\nn: null\n"},
		{"empty", "", "{}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := parse(t, tc.doc)
			out, err := tree.ToYAML(v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out))
			assert.Equal(t, js(t, v), js(t, parse(t, string(out))), "reads back the same")
		})
	}
	out, err := tree.ToYAML(int32(1))
	require.NoError(t, err)
	assert.Equal(t, "'?'\n", string(out), "not a tree value")
}
