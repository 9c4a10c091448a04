package runstatus

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// One report, or a watch until the verdict is final; a cluster that keeps
// failing ends the watch after MaxFailedPolls polls.
func TestWatch(t *testing.T) {
	running := fakeCluster{jobsPath: list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "", "Running"))}
	failed := fakeCluster{jobsPath: list("ray.io/v1", "RayJob", job("run1", "j1", "run1", "", "", "Failed"))}
	broken := fakeCluster{jobsPath: status(500, "InternalError")}
	for _, tc := range []struct {
		name    string
		cluster fakeCluster
		watch   bool
		format  string
		verdict Verdict
		out     string // the start of what is printed
		retries int    // polls retried, each a line of the log
		err     bool
	}{
		{"one report", running, false, "text", Running, "run run1 in namespace ml: running\n", 0, false},
		{"json", running, false, "json", Running, "{\n  \"run\": \"run1\"", 0, false},
		{"watch until final", failed, true, "text", Failed, "run run1 in namespace ml: failed\n", 0, false},
		{"nothing of the run", fakeCluster{}, true, "text", NotFound, "run run1 in namespace ml: not found\n", 0, false},
		{"cluster keeps failing", broken, true, "text", "", "", MaxFailedPolls - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, log bytes.Buffer
			v, err := Watch(context.Background(), conn(t, tc.cluster), WatchOptions{Namespace: "ml", Run: "run1", Format: tc.format,
				Watch: tc.watch, Interval: time.Millisecond, Out: &out, Log: &log})
			assert.Equal(t, tc.err, err != nil, "%v", err)
			assert.Equal(t, tc.verdict, v)
			assert.True(t, strings.HasPrefix(out.String(), tc.out), "%q", out.String())
			assert.Equal(t, tc.retries, strings.Count(log.String(), "status: poll "), log.String())
		})
	}
}
