package registry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// absent finds nothing: every read is a NotFound.
type absent struct{}

func (absent) Get(context.Context, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, scheduler.Outcome, error) {
	return nil, scheduler.NotFound, nil
}

func (absent) List(context.Context, schema.GroupVersionResource, string, string) ([]unstructured.Unstructured, scheduler.Outcome, error) {
	return nil, scheduler.NotFound, nil
}

func (absent) Stops(error) bool { return false }

// A LocalQueue is Kueue's to judge (its ClusterQueue is read); any other
// prerequisite is no integration's, and its line is left as read.
func TestPreflightObject(t *testing.T) {
	lq := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}}
	for _, tc := range []struct {
		kind   string
		judged bool
		state  scheduler.State
	}{
		{"LocalQueue", true, scheduler.Missing},
		{"Queue", false, scheduler.OK},
		{"PersistentVolumeClaim", false, scheduler.OK},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			l := scheduler.Line{Need: scheduler.Need{Kind: tc.kind, Name: "q"}, State: scheduler.OK}
			got, ok, err := PreflightObject(context.Background(), absent{}, scheduler.PreflightRun{}, l, lq)
			require.NoError(t, err)
			require.Equal(t, tc.judged, ok)
			require.Equal(t, tc.state, got.State, got.Detail)
		})
	}
}

// A pod set whose run names no LocalQueue is admitted as rendered.
func TestPreflightAdmit(t *testing.T) {
	pods := []scheduler.PodSet{{Pod: workload.Pod{Namespace: "a", Object: "RayJob/j", Count: 2}}}
	got, err := PreflightAdmit(context.Background(), absent{}, scheduler.PreflightRun{Pods: pods})
	require.NoError(t, err)
	require.Equal(t, pods, got)
}
