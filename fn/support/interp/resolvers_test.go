package interp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The arithmetic resolvers keep Python's types: ints stay ints, one float
// makes a float, bools count as ints, div is true division; anything else
// is refused naming the argument.
func TestArithmeticResolvers(t *testing.T) {
	type fn func([]any) (any, error)
	cases := []struct {
		name string
		f    fn
		args []any
		want any
		err  string
	}{
		{"add ints", addResolver, []any{int64(1), int64(2), int64(3)}, int64(6), ""},
		{"add with a float", addResolver, []any{int64(1), 0.5}, 1.5, ""},
		{"add a bool", addResolver, []any{int64(1), true}, int64(2), ""},
		{"mul ints", mulResolver, []any{int64(3), int64(4)}, int64(12), ""},
		{"mul with float", mulResolver, []any{int64(2), 1.5}, 3.0, ""},
		{"mul by false", mulResolver, []any{int64(7), false}, int64(0), ""},
		{"div of ints is a float", divResolver, []any{int64(8), int64(2)}, 4.0, ""},
		{"div by zero", divResolver, []any{int64(1), int64(0)}, nil, "division by zero"},
		{"div by 0.0", divResolver, []any{int64(1), 0.0}, nil, "division by zero"},
		{"div of three", divResolver, []any{int64(1), int64(2), int64(3)}, nil, "takes exactly two arguments"},
		{"max of ints", maxResolver, []any{int64(3), int64(9), int64(4)}, int64(9), ""},
		{"max keeps the winner's type", maxResolver, []any{2.5, int64(3)}, int64(3), ""},
		{"max of a float", maxResolver, []any{int64(2), 2.5}, 2.5, ""},
		{"max keeps the first of equals", maxResolver, []any{int64(2), 2.0}, int64(2), ""},
		{"a string", mulResolver, []any{"a", int64(2)}, nil, "argument a is a string, not a number"},
		{"null", addResolver, []any{nil}, nil, "is a null, not a number"},
		{"no arguments", maxResolver, nil, nil, "needs at least one argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.f(c.args)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// oc.env reads the variable, else its default (null stays null, others
// as str() writes them); user is --user. Both refuse wrong arguments.
func TestEnvAndUserResolvers(t *testing.T) {
	env := func(k string) (string, bool) {
		return map[string]string{"HF_HOME": "/hf", "EMPTY": ""}[k], k == "HF_HOME" || k == "EMPTY"
	}
	r := &Resolver{opts: Options{User: "alice", Env: env}}
	cases := []struct {
		name string
		f    func([]any) (any, error)
		args []any
		want any
		err  string
	}{
		{"set", r.envResolver, []any{"HF_HOME"}, "/hf", ""},
		{"set to empty", r.envResolver, []any{"EMPTY", "d"}, "", ""},
		{"set wins over the default", r.envResolver, []any{"HF_HOME", "/tmp"}, "/hf", ""},
		{"default", r.envResolver, []any{"NOPE", "/tmp"}, "/tmp", ""},
		{"default null", r.envResolver, []any{"NOPE", nil}, nil, ""},
		{"default typed", r.envResolver, []any{"NOPE", int64(3)}, "3", ""},
		{"unset", r.envResolver, []any{"NOPE"}, nil, "environment variable 'NOPE' not found"},
		{"unset without Env", (&Resolver{}).envResolver, []any{"HF_HOME"}, nil, "environment variable 'HF_HOME' not found"},
		{"no name", r.envResolver, nil, nil, "takes a variable name and an optional default"},
		{"three arguments", r.envResolver, []any{"a", "b", "c"}, nil, "takes a variable name and an optional default"},
		{"a number for a name", r.envResolver, []any{int64(1)}, nil, "variable name must be a string"},
		{"user", r.userResolver, nil, "alice", ""},
		{"user with an argument", r.userResolver, []any{"x"}, nil, "takes no arguments"},
		{"no user", (&Resolver{}).userResolver, nil, nil, "no user: pass --user or set NRL_K8S_USER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.f(c.args)
			if c.err != "" {
				assert.EqualError(t, err, c.err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}
