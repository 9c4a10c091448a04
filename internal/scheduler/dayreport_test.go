package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The table lists the harness's steps by the wall time they took, the
// largest first, after the runs and before the totals.
func TestDayReportSpent(t *testing.T) {
	var r DayReport
	now := time.Now()
	r.Time("preflight", now.Add(-2*time.Second))
	r.Time("apply", now.Add(-time.Second))
	r.Time("preflight", now.Add(-2*time.Second))
	assert.InDelta(t, 4*time.Second, r.Spent["preflight"], float64(time.Second))
	table := r.Table()
	pre, apply, totals := strings.Index(table, "in preflight"), strings.Index(table, "in apply"), strings.Index(table, "0 runs on")
	assert.True(t, pre >= 0 && apply > pre && totals > apply, "steps largest first, before the totals:\n%s", table)
}
