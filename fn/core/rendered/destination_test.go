package rendered_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

func TestDestinations(t *testing.T) {
	doc := func(kind, managedBy string) rendered.Doc {
		data := map[string]any{"kind": kind, "metadata": map[string]any{"name": "r"}, "spec": map[string]any{}}
		if managedBy != "" {
			data["spec"] = map[string]any{"managedBy": managedBy}
		}
		return rendered.FromData(data)
	}
	cm, cd := doc("ConfigMap", ""), doc("ComputeDomain", "")
	cases := []struct {
		name string
		docs []rendered.Doc
		want []rendered.Destination
	}{
		{"no MultiKueue: one cluster", []rendered.Doc{cm, doc("RayJob", "")},
			[]rendered.Destination{rendered.OneCluster, rendered.OneCluster}},
		{"KubeRay's own managedBy: one cluster", []rendered.Doc{cm, doc("RayJob", "ray.io/kuberay-operator")},
			[]rendered.Destination{rendered.OneCluster, rendered.OneCluster}},
		{"a dispatched RayJob to the manager, the rest to the workers", []rendered.Doc{cm, cd, doc("RayJob", vocab.MultiKueueControllerName)},
			[]rendered.Destination{rendered.Worker, rendered.Worker, rendered.Manager}},
		{"a dispatched RayCluster", []rendered.Doc{doc("RayCluster", vocab.MultiKueueControllerName), cm},
			[]rendered.Destination{rendered.Manager, rendered.Worker}},
		{"managedBy on another kind dispatches nothing", []rendered.Doc{doc("Deployment", vocab.MultiKueueControllerName), cm},
			[]rendered.Destination{rendered.OneCluster, rendered.OneCluster}},
		{"spec not a map", []rendered.Doc{rendered.FromData(map[string]any{"kind": "RayJob", "spec": "x"})},
			[]rendered.Destination{rendered.OneCluster}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, rendered.Destinations(tc.docs))
		})
	}
}

// A run its profile dispatches goes to the workers whole when its render
// holds no job object (stopped); a job object dispatches whatever the
// caller says.
func TestRunDestinations(t *testing.T) {
	cm := rendered.FromData(map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "r"}})
	job := rendered.FromData(map[string]any{"kind": "RayJob", "metadata": map[string]any{"name": "r"}, "spec": map[string]any{"managedBy": vocab.MultiKueueControllerName}})
	cases := []struct {
		name       string
		docs       []rendered.Doc
		dispatched bool
		want       []rendered.Destination
	}{
		{"stopped dispatched run: all to the workers", []rendered.Doc{cm}, true, []rendered.Destination{rendered.Worker}},
		{"not dispatched: one cluster", []rendered.Doc{cm}, false, []rendered.Destination{rendered.OneCluster}},
		{"dispatched with its job", []rendered.Doc{cm, job}, true, []rendered.Destination{rendered.Worker, rendered.Manager}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, rendered.RunDestinations(tc.docs, tc.dispatched))
		})
	}
}
