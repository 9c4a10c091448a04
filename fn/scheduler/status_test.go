package scheduler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A text over MaxReported bytes is cut at a rune boundary and marked; a
// shorter one is kept whole.
func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "lost", "lost"},
		{"at the bound", strings.Repeat("x", MaxReported), strings.Repeat("x", MaxReported)},
		{"over", strings.Repeat("x", MaxReported+1), strings.Repeat("x", MaxReported) + "..."},
		{"a rune across the bound", strings.Repeat("x", MaxReported-1) + "é", strings.Repeat("x", MaxReported-1) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Bound(tc.in)) })
	}
}
