package manifest

import (
	"strconv"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
)

func TestSplitSegments(t *testing.T) {
	group := func(name string, replicas int32) rayv1.WorkerGroupSpec {
		return rayv1.WorkerGroupSpec{GroupName: name, Replicas: ptr(replicas)}
	}
	for _, tc := range []struct {
		name    string
		groups  []rayv1.WorkerGroupSpec
		size    int32
		want    []string // group name/replicas
		wantErr string
	}{
		{"divisible group splits into size-replica segments", []rayv1.WorkerGroupSpec{group("gpu", 4)}, 2,
			[]string{"gpu-segment-0/2", "gpu-segment-1/2"}, ""},
		{"a group no larger than size is kept", []rayv1.WorkerGroupSpec{group("gpu", 2), group("cpu", 1)}, 2,
			[]string{"gpu/2", "cpu/1"}, ""},
		{"unnamed group gets a base name", []rayv1.WorkerGroupSpec{group("", 4)}, 2,
			[]string{"workers-segment-0/2", "workers-segment-1/2"}, ""},
		{"indivisible replicas name the group, replicas and size", []rayv1.WorkerGroupSpec{group("gpu", 5)}, 2,
			nil, "workerGroup 'gpu' has replicas=5 which is not evenly divisible by segmentSize=2"},
		{"what KubeRay starts is split: replicas below minReplicas", []rayv1.WorkerGroupSpec{{GroupName: "gpu", Replicas: ptr[int32](4), MinReplicas: ptr[int32](16), MaxReplicas: ptr[int32](16)}}, 8,
			[]string{"gpu-segment-0/8", "gpu-segment-1/8"}, ""},
		{"what KubeRay starts is split: replicas above maxReplicas", []rayv1.WorkerGroupSpec{{GroupName: "gpu", Replicas: ptr[int32](2147483647), MaxReplicas: ptr[int32](4)}}, 1,
			[]string{"gpu-segment-0/1", "gpu-segment-1/1", "gpu-segment-2/1", "gpu-segment-3/1"}, ""},
		{"too many groups is refused before any is built", []rayv1.WorkerGroupSpec{group("gpu", 2147483646)}, 2,
			nil, "into more than 1000 worker groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := splitSegments(tc.groups, tc.size)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, g := range out {
				got = append(got, g.GroupName+"/"+strconv.Itoa(int(*g.Replicas)))
				if g.GroupName != tc.groups[0].GroupName && g.MinReplicas != nil {
					require.Equal(t, *g.Replicas, *g.MinReplicas, "a segment's min and max are its size")
					require.Equal(t, *g.Replicas, *g.MaxReplicas)
				}
			}
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(out), capacity.MaxWorkerGroups)
		})
	}
}
