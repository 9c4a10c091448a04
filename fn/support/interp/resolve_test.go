package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func resolveAt(t *testing.T, doc, path string, env map[string]string) (any, error) {
	t.Helper()
	root, err := tree.Parse("t.yaml", []byte(doc))
	require.NoError(t, err)
	r := interp.New(root, interp.Options{User: "alice", Env: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	return r.Value(tree.ParsePath(path))
}

// docs/nrl-k8s.md §2.5, rule by rule.
func TestInterpolationRules(t *testing.T) {
	cases := []struct {
		name, doc, path string
		want            any
	}{
		{"absolute key", "a: {b: 3}\nx: ${a.b}", "x", int64(3)},
		{"typed whole value even when quoted", "k: {s: 2}\nx: \"${k.s}\"", "x", int64(2)},
		{"embedded becomes a string", "k: {s: 16}\nx: seg=${k.s}", "x", "seg=16"},
		{"sibling", "g: {replicas: 64, min: '${.replicas}'}", "g.min", int64(64)},
		{"parent's sibling", "top: 1\ng: {h: {x: '${..top2}'}, top2: 5}", "g.h.x", int64(5)},
		{"grandparent's sibling", "p: 9\ng: {h: {x: '${...p}'}}", "g.h.x", int64(9)},
		{"user resolver", "x: ${user:}-secrets", "x", "alice-secrets"},
		{"mul", "a: 3\nx: ${mul:${a},4}", "x", int64(12)},
		{"add", "a: 1\nx: ${add:${a}, 1}", "x", int64(2)},
		{"div is true division", "x: ${div:8,2}", "x", 4.0},
		{"max", "x: ${max:3,9,4}", "x", int64(9)},
		{"nested in key", "sel: b\nm: {a: 1, b: 2}\nx: ${m.${sel}}", "x", int64(2)},
		{"env", "x: ${oc.env:HF_HOME}/d", "x", "/hf/d"},
		{"env null default", "x: ${oc.env:NOPE,null}", "x", nil},
		{"mapping reference", "a: {b: '${c}'}\nc: 1\nx: ${a}", "x", mapOf(t, "b: 1")},
		{"chain", "a: ${b}\nb: ${c}\nc: z", "a", "z"},
		{"str of bool and float", "b: true\nf: 1.0e-05\nx: ${b}-${f}", "x", "True-1e-05"},
		{"missing value kept", "x: ???", "x", "???"},
		{"no interpolation", `x: 'a\b'`, "x", `a\b`},
		{"escaped value is not read twice", "a: '\\${X}'\nb: ${a}", "b", "${X}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveAt(t, tc.doc, tc.path, map[string]string{"HF_HOME": "/hf"})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func mapOf(t *testing.T, doc string) any {
	v, err := tree.Parse("m.yaml", []byte(doc))
	require.NoError(t, err)
	return v
}

func TestInterpolationErrors(t *testing.T) {
	cases := []struct{ name, doc, path, want string }{
		{"missing key", "x: ${a.b}", "x", `x: cannot resolve "${a.b}": interpolation key 'a.b' not found`},
		{"cycle", "a: ${b}\nb: ${a}", "a", "interpolation cycle"},
		{"self", "a: ${a}", "a", "interpolation cycle"},
		{"unknown resolver", "x: ${nope:1}", "x", "unsupported interpolation type nope"},
		{"unclosed", "x: ${a", "x", "syntax error: unclosed interpolation"},
		{"mandatory", "a: ???\nx: ${a}", "x", "mandatory value (???)"},
		{"climb above root", "x: ${...a}", "x", "climbs above the root"},
		{"mapping into a string", "m: {a: 1}\nx: v=${m}", "x", "cannot put a mapping into a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveAt(t, tc.doc, tc.path, nil)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// An error from a key or argument computed by a nested interpolation names
// the key path and the raw text, never the computed value: a pull request
// could otherwise point `a.b` at anything and read it in CI's output.
func TestErrorsDoNotEchoComputedValues(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tc := range []struct{ name, expr, want string }{
		{"env name", "${oc.env:${a.b}}", "resolver oc.env fails on an argument computed by a nested interpolation"},
		{"arithmetic", "${add:${a.b},1}", "resolver add fails on an argument computed by a nested interpolation"},
		{"key", "${${a.b}}", "the key computed by a nested interpolation does not resolve"},
		{"relative key", "${..${a.b}}", "the key computed by a nested interpolation does not resolve"},
		{"mandatory behind a computed key", "${${a.m}}", "the key computed by a nested interpolation does not resolve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "a: {b: " + secret + ", m: z}\nz: '???'\nx: '" + tc.expr + "'"
			_, err := resolveAt(t, doc, "x", nil)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "x: cannot resolve")
			require.NotContains(t, err.Error(), secret)
		})
	}
	// A literal argument is the file's own text and is still named.
	_, err := resolveAt(t, "x: ${oc.env:NOPE}", "x", nil)
	require.ErrorContains(t, err, "environment variable 'NOPE' not found")
}
