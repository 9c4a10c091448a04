package registry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
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

func (absent) BoundPods(context.Context) (scheduler.BoundPods, scheduler.Outcome, error) {
	return scheduler.BoundPods{}, scheduler.NotFound, nil
}

func (absent) Nodes(context.Context) ([]*corev1.Node, scheduler.Outcome, error) {
	return nil, scheduler.NotFound, nil
}

func (absent) Exists(context.Context, schema.GroupVersionResource, string, string) (scheduler.Outcome, error) {
	return scheduler.NotFound, nil
}

func (absent) Stops(error) bool { return false }

// A LocalQueue is Kueue's to judge (its ClusterQueue is read), a KAI
// Queue KAI's (a run asking nothing: ok); any other prerequisite is no
// integration's, and its line is left as read.
func TestPreflightObject(t *testing.T) {
	lq := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}}
	for _, tc := range []struct {
		kind, apiVersion string
		judged           bool
		state            scheduler.State
	}{
		{"LocalQueue", vocab.KueueAPIVersion, true, scheduler.Missing},
		{"Queue", vocab.KAIQueueAPIVersion, true, scheduler.OK},
		{"PersistentVolumeClaim", "v1", false, scheduler.CannotTell},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			l := scheduler.Line{Need: scheduler.Need{Kind: tc.kind, APIVersion: tc.apiVersion, Name: "q"}, State: scheduler.CannotTell}
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

// asked finds nothing and records the resources it was asked to get.
type asked struct {
	absent
	gets *[]string
}

func (a asked) Get(_ context.Context, gvr schema.GroupVersionResource, _, _ string) (*unstructured.Unstructured, scheduler.Outcome, error) {
	*a.gets = append(*a.gets, gvr.Resource)
	return nil, scheduler.NotFound, nil
}

// The dispatch setup is the dispatching integration's (Kueue reads the
// run's LocalQueue first); a run whose queue is absent has no setup lines
// and no word on any worker.
func TestPreflightDispatch(t *testing.T) {
	var gets []string
	run := scheduler.PreflightRun{Queues: map[string]string{"a/RayJob/j": "lab"}}
	w, lines, err := PreflightDispatch(context.Background(), asked{gets: &gets}, run)
	require.NoError(t, err)
	require.Equal(t, []string{"localqueues"}, gets)
	require.Empty(t, lines)
	require.False(t, w.Known)
	require.Empty(t, w.WhyNot("w1"))
}
