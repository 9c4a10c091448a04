package interp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// A key's leading dots climb from the value: one is a sibling, each more
// one level up; no dots is absolute.
func TestRelative(t *testing.T) {
	at := tree.Path{"g", "h", "x"}
	cases := []struct {
		ref  string
		want tree.Path
		err  string
	}{
		{"a.b", tree.Path{"a", "b"}, ""},
		{".y", tree.Path{"g", "h", "y"}, ""},
		{"..y.z", tree.Path{"g", "y", "z"}, ""},
		{"...p", tree.Path{"p"}, ""},
		{"..", tree.Path{"g"}, ""},
		{"....p", nil, `relative key "....p" climbs above the root`},
		{"", nil, "empty interpolation key"},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			got, err := relative(at, c.ref)
			if c.err != "" {
				assert.EqualError(t, err, c.err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// An unquoted resolver argument is typed as OmegaConf types it.
func TestPrimitive(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{"True", true}, {"false", false}, {"NULL", nil}, {"42", int64(42)}, {"1_000", int64(1000)},
		{"-3", int64(-3)}, {"1.5", 1.5}, {"1e-05", 1e-05}, {"inf", "inf"}, {"nan", "nan"},
		{"99999999999999999999", 1e20}, {"a", "a"}, {"", ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, primitive(c.in), "%q", c.in)
	}
}

// Scalars are written as Python's str() writes them; mappings and lists
// cannot go into a string.
func TestToString(t *testing.T) {
	cases := []struct {
		in   any
		want string
		err  string
	}{
		{"s", "s", ""}, {int64(-7), "-7", ""}, {2.0, "2.0", ""}, {true, "True", ""}, {false, "False", ""}, {nil, "None", ""},
		{[]any{}, "", "cannot put a list into a string"},
	}
	for _, c := range cases {
		got, err := ToString(c.in)
		if c.err != "" {
			assert.EqualError(t, err, c.err)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}

// Floats are written as Python's repr(float): fixed notation from 1e-4 to
// below 1e16, exponent form outside, always with a point or exponent.
func TestPyFloat(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{2, "2.0"}, {0.5, "0.5"}, {1e-05, "1e-05"}, {0.0001, "0.0001"}, {1e16, "1e+16"}, {9999999999999998, "9999999999999998.0"},
		{123456.0, "123456.0"}, {-3.25, "-3.25"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, PyFloat(c.f), "%v", c.f)
	}
}
