package kai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(s), &u.Object))
	return u
}

// A Queue's spec as KAI reads it: CPU in millicores, memory in megabytes,
// -1 unlimited, absent values 0, priority 100 unless set; a value that is
// no number is an error naming the field.
func TestQueueOf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Queue
		err      string
	}{
		{name: "every resource", in: "metadata: {name: a}\nspec: {parentQueue: p, priority: 7, resources: {gpu: {quota: 8, limit: -1, overQuotaWeight: 2}, cpu: {quota: 4000, limit: -1}, memory: {quota: 1000, limit: -1}}}",
			want: Queue{Name: "a", Parent: "p", Priority: 7, Deserved: Resources{8, 4000, 1e9}, Limit: Resources{Unlimited, Unlimited, Unlimited}, OverQuota: Resources{GPU: 2}}},
		{name: "defaults", in: "metadata: {name: a}\nspec: {}",
			want: Queue{Name: "a", Priority: DefaultQueuePriority}},
		{name: "bad quota", in: "metadata: {name: a}\nspec: {resources: {gpu: {quota: many}}}",
			err: "Queue a spec.resources.gpu.quota is many; expected a number, -1 for unlimited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := QueueOf(obj(t, tc.in))
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A PodGroup as the model weighs it: named by its owner, its priority
// class's value (KAI's default 50 for one the cluster lacks), preemptible
// below 100 unless spec.preemptibility says, its resourcesStatus.
func TestJobOf(t *testing.T) {
	classes := map[string]int32{"train": 50, "build": 100}
	lookup := func(c string) (int32, bool) { v, ok := classes[c]; return v, ok }
	pg := func(spec, status string) string {
		return "metadata: {name: pg, namespace: lab, ownerReferences: [{kind: RayJob, name: j, apiVersion: ray.io/v1, uid: u}]}\nspec: " + spec + "\nstatus: " + status
	}
	for _, tc := range []struct {
		name, in, ns string
		want         Job
		err          string
	}{
		{name: "running, train", ns: "lab", in: pg("{queue: a, priorityClassName: train}", "{resourcesStatus: {allocated: {nvidia.com/gpu: '8', cpu: '2', memory: 1Gi}, requested: {nvidia.com/gpu: '8'}}}"),
			want: Job{Name: "RayJob j", Queue: "a", Priority: 50, Preemptible: true, Allocated: Resources{8, 2000, 1 << 30}, Requested: Resources{GPU: 8}}},
		{name: "build is non-preemptible, another namespace named", ns: "other", in: pg("{queue: a, priorityClassName: build}", "{}"),
			want: Job{Name: "RayJob lab/j", Queue: "a", Priority: 100}},
		{name: "spec.preemptibility wins", ns: "lab", in: pg("{queue: a, priorityClassName: build, preemptibility: preemptible}", "{}"),
			want: Job{Name: "RayJob j", Queue: "a", Priority: 100, Preemptible: true}},
		{name: "unknown class: KAI's default", ns: "lab", in: pg("{queue: a, priorityClassName: gone}", "{}"),
			want: Job{Name: "RayJob j", Queue: "a", Priority: DefaultPodGroupPriority, Preemptible: true}},
		{name: "bad quantity", ns: "lab", in: pg("{queue: a}", "{resourcesStatus: {allocated: {nvidia.com/gpu: lots}}}"),
			err: "PodGroup lab/pg status.resourcesStatus.allocated[nvidia.com/gpu] is lots; expected a quantity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JobOf(obj(t, tc.in), tc.ns, lookup)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			got.Created = tc.want.Created
			assert.Equal(t, tc.want, got)
		})
	}
}
