package interp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// show writes parts as a test reads them: literal text quoted, a node
// reference as ${path}, a resolver call as name(arg|arg) with quoted
// arguments marked q.
func show(parts []part) string {
	var b strings.Builder
	for _, pt := range parts {
		switch pt.kind {
		case litPart:
			b.WriteString(`"` + pt.text + `"`)
		case nodePart:
			b.WriteString("${" + show(pt.path) + "}")
		case callPart:
			args := make([]string, len(pt.args))
			for i, a := range pt.args {
				args[i] = show(a.parts)
				if a.quoted {
					args[i] = "q" + args[i]
				}
			}
			b.WriteString(pt.resolver + "(" + strings.Join(args, "|") + ")")
		}
	}
	return b.String()
}

// A string splits into literal text, node references and resolver calls;
// `\${` escapes an interpolation, pairs of backslashes before one halve,
// other backslashes and a `$` without a brace stay as written.
func TestParseTop(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"a}", `"a}"`},
		{"a=${a.b}/c", `"a="${"a.b"}"/c"`},
		{"${m.${sel}}", `${"m."${"sel"}}`},
		{"${.x}${..y}", `${".x"}${"..y"}`},
		{`LOG=\${LOG_DIR}/a`, `"LOG=${LOG_DIR}/a"`},
		{`\\${v}`, `"\"${"v"}`},
		{`\\\${v}`, `"\${v}"`},
		{`say \"hi\" \\ ${u}`, `"say \"hi\" \\ "${"u"}`},
		{"$HOME $(date +%s)", `"$HOME $(date +%s)"`},
		{"${user:}", "user()"},
		{"${mul: ${a} , 4 }", `mul(${"a"}|"4")`},
		{"${oc.env:HF_HOME,/tmp}", `oc.env("HF_HOME"|"/tmp")`},
		{`${f:'a, b' , "it's \" \\"}`, `f(q"a, b"|q"it's " \")`},
		{"${f:''}", `f(q"")`},
		{"${f:'x${a}y'}", `f(q"x"${"a"}"y")`},
		{"${f:a b}", `f("a b")`},
		{"${1x:2}", `${"1x:2"}`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			parts, err := parseTop(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, show(parts))
		})
	}
}

// Malformed interpolations fail with a syntax error saying what is wrong.
func TestParseTopErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"${a", "unclosed interpolation starting at offset 0"},
		{"x ${a.${b}", "unclosed interpolation starting at offset 2"},
		{"${}", "empty interpolation `${}`"},
		{"${f:a", "unclosed resolver call"},
		{"${f:a,", "unclosed resolver call"},
		{"${f:'a}", "unterminated quoted resolver argument"},
		{"${f:'a' b}", `unexpected 'b' in resolver arguments`},
		{strings.Repeat("${", maxNesting+1), "interpolations nested too deeply"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			_, err := parseTop(c.in)
			var se *syntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.want, se.msg)
		})
	}
}
