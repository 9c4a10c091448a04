package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

func TestCompareBool(t *testing.T) {
	for _, tc := range []struct {
		a, b bool
		want int
	}{{false, true, -1}, {true, false, 1}, {true, true, 0}, {false, false, 0}} {
		assert.Equal(t, tc.want, scheduler.CompareBool(tc.a, tc.b), "%v %v", tc.a, tc.b)
	}
}
