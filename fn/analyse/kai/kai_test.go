package kai_test

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

func worker(name string, replicas, minReplicas *int32, hosts int32, annotations map[string]string) rayv1.WorkerGroupSpec {
	g := rayv1.WorkerGroupSpec{GroupName: name, Replicas: replicas, MinReplicas: minReplicas, NumOfHosts: hosts}
	g.Template.Annotations = annotations
	return g
}

var (
	required  = map[string]string{vocab.KAITopologyAnnotation: "gb300", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}
	preferred = map[string]string{vocab.KAITopologyAnnotation: "gb300", vocab.KAIPreferredPlacementAnnotation: "rack"}
)

func TestGroup(t *testing.T) {
	head := kai.SubGroup{Name: vocab.RayHeadGroup, Index: -1, MinMember: 1}
	for _, tc := range []struct {
		name    string
		owner   map[string]string
		head    map[string]string
		workers []rayv1.WorkerGroupSpec
		want    kai.PodGroup
	}{
		{
			name:    "replicas times hosts",
			workers: []rayv1.WorkerGroupSpec{worker("gpu", ptr.To[int32](2), nil, 4, nil)},
			want:    kai.PodGroup{MinMember: 9, SubGroups: []kai.SubGroup{head, {Name: "gpu", Index: 0, MinMember: 8}}},
		},
		{
			name:    "minReplicas wins over replicas",
			workers: []rayv1.WorkerGroupSpec{worker("gpu", ptr.To[int32](4), ptr.To[int32](2), 1, nil)},
			want:    kai.PodGroup{MinMember: 3, SubGroups: []kai.SubGroup{head, {Name: "gpu", Index: 0, MinMember: 2}}},
		},
		{
			name: "an empty group is skipped but keeps its index; an unnamed one is worker-group-<i>; hosts unset is one",
			workers: []rayv1.WorkerGroupSpec{
				worker("idle", ptr.To[int32](0), nil, 4, nil),
				worker("", ptr.To[int32](3), nil, 0, nil),
			},
			want: kai.PodGroup{MinMember: 4, SubGroups: []kai.SubGroup{head, {Name: "worker-group-1", Index: 1, MinMember: 3}}},
		},
		{
			name:    "constraints of the owner, the head and a group",
			owner:   preferred,
			head:    required,
			workers: []rayv1.WorkerGroupSpec{worker("gpu", ptr.To[int32](1), nil, 2, required)},
			want: kai.PodGroup{
				MinMember: 3,
				Topology:  kai.Constraint{Topology: "gb300", Preferred: "rack"},
				SubGroups: []kai.SubGroup{
					{Name: vocab.RayHeadGroup, Index: -1, MinMember: 1, Topology: kai.Constraint{Topology: "gb300", Required: "nvidia.com/gpu.clique"}},
					{Name: "gpu", Index: 0, MinMember: 2, Topology: kai.Constraint{Topology: "gb300", Required: "nvidia.com/gpu.clique"}},
				},
			},
		},
		{
			name:    "a topology alone makes no constraint",
			owner:   map[string]string{vocab.KAITopologyAnnotation: "gb300"},
			workers: []rayv1.WorkerGroupSpec{worker("gpu", ptr.To[int32](1), nil, 1, nil)},
			want:    kai.PodGroup{MinMember: 2, SubGroups: []kai.SubGroup{head, {Name: "gpu", Index: 0, MinMember: 1}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &rayv1.RayClusterSpec{WorkerGroupSpecs: tc.workers}
			spec.HeadGroupSpec.Template.Annotations = tc.head
			got, err := kai.Group(tc.owner, spec)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// A placement without a topology is what KAI's grouper refuses; the error
// names where it is.
func TestGroupRefusesPlacementWithoutTopology(t *testing.T) {
	noTopology := map[string]string{vocab.KAIRequiredPlacementAnnotation: "rack"}
	for _, tc := range []struct {
		name, where string
		owner, head map[string]string
		workers     []rayv1.WorkerGroupSpec
	}{
		{name: "owner", where: "the object's metadata.annotations", owner: noTopology},
		{name: "head", where: "headGroupSpec.template.metadata.annotations", head: noTopology},
		{
			name: "second worker group", where: "workerGroupSpecs[1].template.metadata.annotations",
			workers: []rayv1.WorkerGroupSpec{worker("a", ptr.To[int32](1), nil, 1, nil), worker("b", ptr.To[int32](1), nil, 1, map[string]string{vocab.KAIPreferredPlacementAnnotation: "rack"})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &rayv1.RayClusterSpec{WorkerGroupSpecs: tc.workers}
			spec.HeadGroupSpec.Template.Annotations = tc.head
			_, err := kai.Group(tc.owner, spec)
			require.ErrorContains(t, err, tc.where+": "+vocab.KAIRequiredPlacementAnnotation+" or "+vocab.KAIPreferredPlacementAnnotation+" without "+vocab.KAITopologyAnnotation)
		})
	}
}

func TestKeptTogether(t *testing.T) {
	spec := &rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
		worker("pinned", ptr.To[int32](2), nil, 1, required),
		worker("loose", ptr.To[int32](2), nil, 1, preferred),
	}}
	pg, err := kai.Group(nil, spec)
	require.NoError(t, err)
	require.True(t, pg.KeptTogether([]int{0}), "the group's own required constraint")
	require.False(t, pg.KeptTogether([]int{1}), "a preferred constraint keeps nothing together")
	require.False(t, pg.KeptTogether([]int{0, 1}), "a subgroup's constraint covers only itself")
	require.False(t, pg.KeptTogether([]int{7}), "no such group")

	owned, err := kai.Group(required, spec)
	require.NoError(t, err)
	require.True(t, owned.KeptTogether([]int{0, 1}), "the owner's required constraint binds the whole gang")
}

func TestConstraintString(t *testing.T) {
	require.Equal(t, "none", kai.Constraint{Topology: "gb300"}.String())
	require.True(t, kai.Constraint{Topology: "gb300"}.None())
	require.Equal(t, "required nvidia.com/gpu.clique (topology gb300)", kai.Constraint{Topology: "gb300", Required: "nvidia.com/gpu.clique"}.String())
	require.Equal(t, "preferred rack (topology gb300)", kai.Constraint{Topology: "gb300", Preferred: "rack"}.String())
	require.Equal(t, "required a (topology t)", kai.Constraint{Topology: "t", Required: "a", Preferred: "b"}.String(), "required wins")
}
