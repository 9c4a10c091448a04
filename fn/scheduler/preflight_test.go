package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A read's outcome is one verdict: found is ok, refused or failed is
// cannot tell (with the error's first line), absent is missing.
func TestVerdict(t *testing.T) {
	boom := errors.New("boom\nmore")
	for _, tc := range []struct {
		name   string
		out    Outcome
		err    error
		state  State
		detail string
		failed bool
		why    string
	}{
		{"found", Found, nil, OK, "", false, "x could not be read (error: )"},
		{"forbidden", Forbidden, boom, CannotTell, "no permission to read it: boom", true, "x could not be read (boom)"},
		{"error", NotFound, boom, CannotTell, "boom", true, "x could not be read (error: boom)"},
		{"absent", NotFound, nil, Missing, "not found", false, "x could not be read (error: )"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, d := Verdict(tc.out, tc.err)
			assert.Equal(t, tc.state, st)
			assert.Equal(t, tc.detail, d)
			assert.Equal(t, tc.failed, Failed(tc.out, tc.err))
			assert.Equal(t, tc.why, ReadFailure("x", tc.out, tc.err))
		})
	}
}

// Missing is worse than cannot tell, which is worse than ok.
func TestWorse(t *testing.T) {
	order := []State{OK, CannotTell, Missing}
	for i, a := range order {
		for j, b := range order {
			assert.Equal(t, i > j, Worse(a, b), "%s worse than %s", a, b)
		}
	}
}
