package tree_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func js(t *testing.T, v any) string {
	t.Helper()
	m, ok := v.(*tree.Map)
	require.True(t, ok)
	b, err := m.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

func TestParse(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"order kept", "b: 1\na: 2\n", `{"b":1,"a":2}`},
		{"anchors and aliases", "_s: {n: &n {k: v}}\nx: *n\n", `{"_s":{"n":{"k":"v"}},"x":{"k":"v"}}`},
		{"merge key, explicit wins", "base: &b {a: 1, c: 1}\nx:\n  <<: *b\n  a: 2\n", `{"base":{"a":1,"c":1},"x":{"a":2,"c":1}}`},
		{"merge list, first wins", "p: &p {a: 1}\nq: &q {a: 2, b: 2}\nx: {<<: [*p, *q]}\n", `{"p":{"a":1},"q":{"a":2,"b":2},"x":{"a":1,"b":2}}`},
		{"yaml 1.1 booleans as PyYAML reads them", "a: yes\nb: off\nc: 'yes'\n", `{"a":true,"b":false,"c":"yes"}`},
		{"types", "i: 3\nf: 1.5e-5\ns: '3'\nn: null\nb: true\n", `{"i":3,"f":0.000015,"s":"3","n":null,"b":true}`},
		{"block scalar keeps backslashes", "e: |\n  a \\${X}\n", `{"e":"a \\${X}\n"}`},
		{"empty document", "", `{}`},
		{"comment only", "# nothing\n", `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tree.Parse("t.yaml", []byte(tc.doc))
			require.NoError(t, err)
			require.Equal(t, tc.want, js(t, v))
		})
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("[", tree.MaxDepth+10) + strings.Repeat("]", tree.MaxDepth+10)
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
	cases := []struct{ name, doc, want string }{
		{"duplicate key", "a: 1\na: 2\n", `t.yaml:2:1: duplicate key "a"`},
		{"two documents", "a: 1\n---\nb: 2\n", "more than one YAML document"},
		{"bad escape in double quotes", `a: "\${X}"`, "t.yaml: "},
		{"unclosed flow", "a: [1, 2\n", "t.yaml: "},
		{"deep nesting", deep, "nesting deeper than"},
		{"alias bomb", bomb, "expands to more than"},
		{"merge of a scalar", "x: {<<: 3}\n", "merge key `<<` needs a mapping"},
		{"binary", "\x00\x01\x02", "t.yaml: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tree.Parse("t.yaml", []byte(tc.doc))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
