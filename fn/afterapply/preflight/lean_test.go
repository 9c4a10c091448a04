package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
)

// apiNode is a GPU node as an API server answers it: labels, annotations
// and managed fields, taints, capacity, conditions with their times,
// addresses, node info and images.
func apiNode(i int) map[string]any {
	name := fmt.Sprintf("gpu-%04d", i)
	labels := map[string]any{"kubernetes.io/hostname": name, "kubernetes.io/arch": "arm64", "kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "p6e-gb300.36xlarge", "topology.kubernetes.io/zone": "us-east-1a", "topology.kubernetes.io/region": "us-east-1",
		"nvidia.com/gpu.product": "NVIDIA-GB300", "nvidia.com/gpu.count": "4", "nvidia.com/gpu.memory": "284208", "nvidia.com/gpu.clique": fmt.Sprintf("rack%03d.1", i/4),
		"nvidia.com/cuda.driver.major": "580", "feature.node.kubernetes.io/network-sriov.capable": "true"}
	conds := []any{}
	for _, c := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
		st := "False"
		if c == "Ready" {
			st = "True"
		}
		conds = append(conds, map[string]any{"type": c, "status": st, "lastHeartbeatTime": "2026-12-07T10:00:00Z", "lastTransitionTime": "2026-12-01T10:00:00Z",
			"reason": "Kubelet" + c, "message": "kubelet has sufficient " + c})
	}
	images := []any{}
	for j := range 12 {
		images = append(images, map[string]any{"names": []any{fmt.Sprintf("nvcr.io/nvidia/nemo-rl@sha256:%064d", j), fmt.Sprintf("nvcr.io/nvidia/nemo-rl:v0.%d", j)}, "sizeBytes": 21474836480 + j})
	}
	fields := map[string]any{}
	for _, f := range []string{"allocatable", "capacity", "conditions", "daemonEndpoints", "images", "nodeInfo", "addresses"} {
		fields["f:"+f] = map[string]any{".": map[string]any{}, "f:cpu": map[string]any{}, "f:memory": map[string]any{}, "f:nvidia.com/gpu": map[string]any{}}
	}
	res := map[string]any{"cpu": "144", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "4", "ephemeral-storage": "3500Gi", "hugepages-2Mi": "0"}
	return map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "uid": fmt.Sprintf("%08d-0000-0000-0000-000000000000", i), "resourceVersion": strconv.Itoa(1000 + i),
			"creationTimestamp": "2026-12-01T10:00:00Z", "labels": labels,
			"annotations":   map[string]any{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true", "csi.volume.kubernetes.io/nodeid": `{"efs.csi.aws.com":"i-0123"}`},
			"managedFields": []any{map[string]any{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-12-07T10:00:00Z", "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": map[string]any{"f:status": fields}}}},
		"spec": map[string]any{"providerID": "aws:///us-east-1a/i-0123", "taints": []any{map[string]any{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}}},
		"status": map[string]any{"capacity": res, "allocatable": res, "conditions": conds,
			"addresses":       []any{map[string]any{"type": "InternalIP", "address": "10.0.0.1"}, map[string]any{"type": "Hostname", "address": name}},
			"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": 10250}},
			"nodeInfo": map[string]any{"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.8.0", "osImage": "Ubuntu 24.04", "containerRuntimeVersion": "containerd://2.0.0",
				"kubeletVersion": "v1.36.3", "kubeProxyVersion": "v1.36.3", "operatingSystem": "linux", "architecture": "arm64"},
			"images": images}}
}

// apiSlice is a node's ResourceSlice of 8 devices with their attributes
// and capacity, as a DRA driver publishes them.
func apiSlice(node, driver string) map[string]any {
	var devices []any
	for d := range 8 {
		devices = append(devices, map[string]any{"name": fmt.Sprintf("dev-%d", d),
			"attributes": map[string]any{"index": map[string]any{"int": d}, "uuid": map[string]any{"string": fmt.Sprintf("GPU-%08d", d)},
				"productName": map[string]any{"string": "NVIDIA GB300"}, "driverVersion": map[string]any{"version": "580.0.0"}, "pcieRoot": map[string]any{"string": "pci0000:00"}},
			"capacity": map[string]any{"memory": map[string]any{"value": "288Gi"}}})
	}
	return map[string]any{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
		"metadata": map[string]any{"name": node + "-" + driver, "uid": "u", "resourceVersion": "1", "creationTimestamp": "2026-12-01T10:00:00Z",
			"managedFields": []any{map[string]any{"manager": driver, "operation": "Update", "apiVersion": "resource.k8s.io/v1", "time": "2026-12-07T10:00:00Z"}}},
		"spec": map[string]any{"driver": driver, "nodeName": node, "pool": map[string]any{"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}
}

// A Node and a ResourceSlice decoded lean read as decoded whole, in
// every field placement and the lines read.
func TestLeanDecode(t *testing.T) {
	cordoned := apiNode(1)
	cordoned["spec"].(map[string]any)["unschedulable"] = true
	bare := map[string]any{"metadata": map[string]any{"name": "bare"}}
	for _, u := range []map[string]any{apiNode(0), cordoned, bare} {
		raw, err := json.Marshal(u)
		require.NoError(t, err)
		var whole corev1.Node
		require.NoError(t, utiljson.Unmarshal(raw, &whole))
		var l leanNode
		require.NoError(t, utiljson.Unmarshal(raw, &l))
		n := l.node()
		assert.Equal(t, whole.Name, n.Name)
		assert.Equal(t, whole.Labels, n.Labels)
		assert.Equal(t, whole.Spec.Unschedulable, n.Spec.Unschedulable)
		assert.Equal(t, whole.Spec.Taints, n.Spec.Taints)
		assert.Equal(t, whole.Status.Allocatable, n.Status.Allocatable)
		require.Len(t, n.Status.Conditions, len(whole.Status.Conditions))
		for i, c := range whole.Status.Conditions {
			assert.Equal(t, [2]string{string(c.Type), string(c.Status)}, [2]string{string(n.Status.Conditions[i].Type), string(n.Status.Conditions[i].Status)})
		}
	}
	network := apiSlice("n", "roce")
	delete(network["spec"].(map[string]any), "nodeName")
	for _, u := range []map[string]any{apiSlice("n", "roce"), network} {
		raw, err := json.Marshal(u)
		require.NoError(t, err)
		var whole resourcev1.ResourceSlice
		require.NoError(t, utiljson.Unmarshal(raw, &whole))
		var l leanSlice
		require.NoError(t, utiljson.Unmarshal(raw, &l))
		assert.Equal(t, whole.Spec.Driver, l.Spec.Driver)
		assert.Equal(t, whole.Spec.NodeName, l.Spec.NodeName)
		assert.Equal(t, whole.Spec.Pool.Name, l.Spec.Pool.Name)
		assert.Len(t, l.Spec.Devices, len(whole.Spec.Devices))
	}
}

// pagedCluster answers lists by path a page of limit objects at a time,
// as the API server does.
func pagedCluster(tb testing.TB, lists map[string][]map[string]any) *kube.Conn {
	tb.Helper()
	bodies := map[string][][]byte{}
	for path, items := range lists {
		for at := 0; at < len(items); at += kube.PageSize {
			end := min(at+kube.PageSize, len(items))
			cont := ""
			if end < len(items) {
				cont = strconv.Itoa(end)
			}
			b, err := json.Marshal(map[string]any{"metadata": map[string]any{"continue": cont}, "items": items[at:end]})
			require.NoError(tb, err)
			bodies[path] = append(bodies[path], b)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pages, ok := bodies[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		at, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		_, _ = w.Write(pages[at/kube.PageSize])
	}))
	tb.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(tb, err)
	return c
}

// BenchmarkReadFleet reads a 1,050-node fleet as preflight --nodes does:
// the Nodes, then two ResourceSlices a node.
func BenchmarkReadFleet(b *testing.B) {
	var nodes, slices []map[string]any
	for i := range 1050 {
		n := apiNode(i)
		nodes = append(nodes, n)
		if i < 1000 {
			name := n["metadata"].(map[string]any)["name"].(string)
			slices = append(slices, apiSlice(name, "roce"), apiSlice(name, "gpu.nvidia.com"))
		}
	}
	c := pagedCluster(b, map[string][]map[string]any{"/api/v1/nodes": nodes, "/apis/resource.k8s.io/v1/resourceslices": slices})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		k := &cache{}
		all := k.nodesOf(ctx, c)
		require.Len(b, all.nodes, 1050)
		byName := map[string]*placement.Node{}
		for _, n := range all.nodes {
			byName[n.Name] = &placement.Node{Node: n, Devices: map[string]int64{}}
		}
		pools, blind, err := readSlices(ctx, c, byName)
		require.NoError(b, err)
		require.Empty(b, blind)
		require.Len(b, pools, 2000)
		require.Equal(b, map[string]int64{"roce": 8, "gpu.nvidia.com": 8}, byName["gpu-0000"].Devices)
	}
}
