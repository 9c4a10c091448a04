package tree_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func parse(t *testing.T, doc string) any {
	t.Helper()
	v, err := tree.Parse("t.yaml", []byte(doc))
	require.NoError(t, err)
	return v
}

// TestMap: keys keep the order they were first set in, through Set,
// Delete, Copy and MarshalJSON; a nil map is empty.
func TestMap(t *testing.T) {
	m := parse(t, "b: 1\na: {c: [1, {d: 2}]}\nz: 3\n").(*tree.Map)
	m.Set("b", "x")
	m.Delete("z")
	m.Delete("nope")
	m.Set("y", nil)
	c := tree.Copy(m).(*tree.Map)
	require.NoError(t, tree.SetPath(m, tree.ParsePath("a.c[1].d"), int64(9)))
	assert.Equal(t, []string{"b", "a", "y"}, m.Keys())
	assert.Equal(t, `{"b":"x","a":{"c":[1,{"d":9}]},"y":null}`, js(t, m))
	assert.Equal(t, `{"b":"x","a":{"c":[1,{"d":2}]},"y":null}`, js(t, c), "a copy is deep")
	var nilMap *tree.Map
	_, ok := nilMap.Get("a")
	assert.Equal(t, []any{0, []string(nil), false}, []any{nilMap.Len(), nilMap.Keys(), ok})
}

// TestMerge: mappings merge key by key as OmegaConf does, anything else
// replaces; `_override_: true` replaces the mapping, and no marker is
// left anywhere in the result.
func TestMerge(t *testing.T) {
	for _, tc := range []struct{ name, dst, src, want string }{
		{"deep", "m: {a: 1, b: {c: 1}}\nl: [1, 2]\ns: x\n", "m: {b: {d: 2}}\nl: [3]\ns: null\n", `{"m":{"a":1,"b":{"c":1,"d":2}},"l":[3],"s":null}`},
		{"new keys after", "a: 1\n", "b: 2\na: 3\n", `{"a":3,"b":2}`},
		{"_override_ replaces", "m: {a: 1, b: 2}\n", "m: {_override_: true, c: 3}\n", `{"m":{"c":3}}`},
		{"_override_ false merges, a key like any", "m: {a: 1}\n", "m: {_override_: false, c: 3}\n", `{"m":{"a":1,"_override_":false,"c":3}}`},
		{"a marker in a new subtree", "a: 1\n", "m: {n: {_override_: true, c: 3}}\n", `{"a":1,"m":{"n":{"c":3}}}`},
		{"a mapping over a scalar", "m: 1\n", "m: {x: [{_override_: true, c: 3}]}\n", `{"m":{"x":[{"c":3}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := parse(t, tc.src)
			assert.Equal(t, tc.want, js(t, tree.Merge(parse(t, tc.dst), src)))
			assert.Equal(t, js(t, parse(t, tc.src)), js(t, src), "the source is not changed")
		})
	}
}

// TestPaths: dotted paths with plain or bracketed indices, followed,
// set (creating mappings) and deleted; what cannot be followed says why.
func TestPaths(t *testing.T) {
	assert.Equal(t, tree.Path{"a", "0", "b"}, tree.ParsePath("a[0].b"))
	assert.Equal(t, tree.Path{"a", "0", "b"}, tree.ParsePath(".a.0..b"))
	assert.Equal(t, "a.0.b", tree.ParsePath("a[0].b").String())
	for _, tc := range []struct {
		path, set, err string
		lookup         any
	}{
		{"a.l[1].c", `{"a":{"l":[1,{"c":9}],"s":"x"}}`, "", int64(2)},
		{"a.n.m", `{"a":{"l":[1,{"c":2}],"s":"x","n":{"m":9}}}`, "", nil},
		{"a.s.x", "", "a.s is a string, not a mapping", nil},
		{"a.l[2]", "", `a.l: index "2" out of range`, nil},
		{"a.l.x", "", `a.l: index "x" out of range`, nil},
		{"", "", "empty key", nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			m := parse(t, "a: {l: [1, {c: 2}], s: x}\n").(*tree.Map)
			v, ok := tree.Lookup(m, tree.ParsePath(tc.path))
			assert.Equal(t, tc.lookup != nil || tc.path == "", ok)
			if tc.lookup != nil {
				assert.Equal(t, tc.lookup, v)
			}
			err := tree.SetPath(m, tree.ParsePath(tc.path), int64(9))
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.set, js(t, m))
			assert.True(t, tree.DeletePath(m, tree.ParsePath(tc.path)))
			assert.False(t, tree.DeletePath(m, tree.ParsePath(tc.path)), "deleted once")
		})
	}
	assert.False(t, tree.DeletePath(tree.NewMap(), nil))
	m := parse(t, "a: null\n").(*tree.Map)
	require.NoError(t, tree.SetPath(m, tree.ParsePath("a.b"), int64(9)))
	assert.Equal(t, `{"a":{"b":9}}`, js(t, m), "a null becomes a mapping")
}

// TestKinds: a value's kind with its article, for messages.
func TestKinds(t *testing.T) {
	for v, want := range map[any]string{"s": "a string", int64(1): "an integer", 1.5: "a float", true: "a boolean", nil: "a null", int32(1): "an int32"} {
		assert.Equal(t, want, tree.AKind(v), "%T", v)
	}
	assert.Equal(t, "a mapping", tree.AKind(tree.NewMap()))
	assert.Equal(t, "a list", tree.AKind([]any{}))
	assert.Equal(t, "an unknown key", tree.Article("unknown key"))
}

// TestWalk: every scalar leaf with its path, in document order.
func TestWalk(t *testing.T) {
	var got []string
	tree.Walk(parse(t, "b: 1\na: [x, {c: null}]\n"), nil, func(p tree.Path, v any) { got = append(got, fmt.Sprintf("%s=%v", p, v)) })
	assert.Equal(t, []string{"b=1", "a.0=x", "a.1.c=<nil>"}, got)
	assert.Equal(t, []string{"a", "b", "c"}, tree.SortedKeys(map[string]int{"c": 1, "a": 2, "b": 3}))
}
