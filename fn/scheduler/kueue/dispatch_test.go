package kueue

import (
	"errors"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// MultiKueue dispatches a run whole only as one RayJob that creates its
// own cluster or one RayCluster: anything else is refused at the dispatch
// key the profile set, beside its LocalQueue.
func TestDispatchable(t *testing.T) {
	mk, q := DispatchMultiKueue, "lab"
	alone := scheduler.Profile{Kind: Kind, Queue: &q, Dispatch: &mk}
	beside := scheduler.Profile{Kind: kaiKind, Queue: &q, Kueue: &scheduler.KueueBeside{Queue: "lab", Dispatch: &mk}}
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "j"}}
	selecting := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: rayv1.RayJobSpec{ClusterSelector: map[string]string{"a": "b"}}}
	cluster := func(name string) *rayv1.RayCluster {
		return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	for _, tc := range []struct {
		name       string
		p          scheduler.Profile
		mode       runparams.Mode
		objs       []any
		field, msg string
	}{
		{"not dispatched", scheduler.Profile{Kind: Kind, Queue: &q}, runparams.Dev, nil, "", ""},
		{"one RayJob", alone, runparams.RayJob, []any{job}, "", ""},
		{"one RayCluster, beside KAI", beside, runparams.RayCluster, []any{cluster("c")}, "", ""},
		{"dev mode", alone, runparams.Dev, nil, "scheduler.dispatch", "dev mode renders a Pod"},
		{"a RayJob by clusterSelector", beside, runparams.RayCluster, []any{selecting}, "scheduler.kueue.dispatch", "RayJob s is submitted to an existing RayCluster by clusterSelector"},
		{"two RayClusters", alone, runparams.RayCluster, []any{cluster("a"), cluster("b")}, "scheduler.dispatch", "renders 2 RayClusters (a, b)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Integration{}.Dispatchable(tc.p, tc.mode, tc.objs)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *scheduler.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, tc.field, fe.Field)
			require.Contains(t, fe.Msg, tc.msg)
		})
	}
}
