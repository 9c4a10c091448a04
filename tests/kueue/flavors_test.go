package kueue_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// placedRE reads how many pods preflight places of a pod group.
var placedRE = regexp.MustCompile(`^(?:all (\d+) placed|(\d+) of \d+ placed)`)

// Kueue merges the nodeLabels of the flavor it assigns into every pod set
// it admits, the CPU head's included. With one H100 flavor covering cpu,
// memory and GPUs, the head of the H100 Kueue profile is pinned to the GPU
// product label: Kueue admits the run, KubeRay creates its pods, and the
// real kube-scheduler binds the workers and leaves the head Pending, as
// preflight said before, naming the flavor.
func TestFlavorLabelsPinTheHead(t *testing.T) {
	env, _ := kueue.Shared(t)
	assets, err := apiserver.Assets()
	require.NoError(t, err)
	s, err := scheduler.Start(env, assets)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	ctx := context.Background()
	cleanup, err := scheduler.Create(ctx, env, scheduler.EightGPU("kqflv", "NVIDIA-H100-80GB-HBM3", 2, 0, 1))
	require.NoError(t, err)
	t.Cleanup(cleanup)

	ns := "kq-flavor"
	docs, objs, job := render(t, "kq-flavor", ns, runparams.RayJob)
	require.NoError(t, scheduler.Prepare(ctx, env, ns, objs))
	const api = "kueue.x-k8s.io/v1beta2"
	for _, o := range []map[string]any{
		{"apiVersion": api, "kind": "ResourceFlavor", "metadata": map[string]any{"name": "kq-h100"},
			"spec": map[string]any{"nodeLabels": map[string]any{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}},
		{"apiVersion": api, "kind": "ClusterQueue", "metadata": map[string]any{"name": "kq-flavor"},
			"spec": map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
				"flavors": []any{map[string]any{"name": "kq-h100", "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "1000"},
					map[string]any{"name": "memory", "nominalQuota": "100Ti"},
					map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "16"},
				}}}}}}},
		{"apiVersion": api, "kind": "LocalQueue", "metadata": map[string]any{"name": "lab-queue", "namespace": ns},
			"spec": map[string]any{"clusterQueue": "kq-flavor"}},
	} {
		u := &unstructured.Unstructured{Object: o}
		require.NoError(t, env.Server.Client.Create(ctx, u))
		t.Cleanup(func() { _ = env.Server.Client.Delete(context.Background(), u) })
	}
	t.Cleanup(func() { scheduler.Teardown(env, ns) })

	in, err := preflight.InputOf(docs, "", ns)
	require.NoError(t, err)
	in.Nodes = true
	rep, err := preflight.Run(ctx, conn(t, env, ns), in)
	require.NoError(t, err)
	want := map[string]int{}
	for _, l := range rep.Lines {
		if l.Kind != "Nodes" {
			continue
		}
		m := placedRE.FindStringSubmatch(l.Detail)
		require.NotNil(t, m, "%s: %s", l.Name, l.Detail)
		want[l.Name], _ = strconv.Atoi(m[1] + m[2])
		if l.State != preflight.OK {
			assert.Contains(t, l.Detail, "adds ResourceFlavor kq-h100's nodeLabels nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")
		}
	}
	require.Len(t, want, 2, "%v", rep.Lines)

	pods, err := s.WaitScheduled(ctx, env, ns, 3, 1, waitFor)
	require.NoError(t, err)
	got := map[string]int{}
	for _, p := range pods {
		key := "head"
		if p.Labels["ray.io/node-type"] != "head" {
			key = "worker group " + p.Labels["ray.io/group"]
		}
		key = "RayJob/" + job + " " + key
		if _, ok := got[key]; !ok {
			got[key] = 0
		}
		if p.Spec.NodeName != "" {
			got[key]++
		}
		if p.Labels["ray.io/node-type"] == "head" {
			assert.Equal(t, "NVIDIA-H100-80GB-HBM3", p.Spec.NodeSelector["nvidia.com/gpu.product"], "Kueue merged the flavor's label into the head")
		}
	}
	assert.Equal(t, want, got, "preflight's placement and the scheduler's, after Kueue's admission")
}
