package lazyre

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	assert.True(t, first.MatchString("aaa"))
	assert.Same(t, first, re(), "compiled once")
	assert.Panics(t, func() { New(`(`)() }, "a bad pattern fails on first use")
}
