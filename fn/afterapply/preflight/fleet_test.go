package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

// fleetOf takes from each node what bound, unfinished pods request and
// the devices allocated claims hold, but never the input's own (its
// identity label in its namespace); ungated pods not yet bound wait ahead
// of the input; DeviceClasses give each class's driver and the extended
// resource it serves; a failed read is a note (not subtracted) or blind
// (devices unknown).
func TestFleetOf(t *testing.T) {
	pod := func(name, ns, node, phase, run string, more map[string]any) map[string]any {
		meta := map[string]any{"name": name, "namespace": ns, "uid": name}
		if run != "" {
			meta["labels"] = map[string]any{"app.kubernetes.io/instance": run}
		}
		for k, v := range more {
			meta[k] = v
		}
		spec := map[string]any{"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "10"}}}}}
		if node != "" {
			spec["nodeName"] = node
		}
		return obj("v1", "Pod", meta, map[string]any{"spec": spec, "status": map[string]any{"phase": phase}})
	}
	claim := func(devices int, reservedBy ...string) map[string]any {
		var results, reserved []any
		for i := 0; i < devices; i++ {
			results = append(results, map[string]any{"request": "r", "driver": "roce", "pool": "gpu-0", "device": "d" + itoa(i)})
		}
		for _, uid := range reservedBy {
			reserved = append(reserved, map[string]any{"resource": "pods", "name": uid, "uid": uid})
		}
		return obj("resource.k8s.io/v1", "ResourceClaim", map[string]any{"name": "c", "namespace": "z"}, map[string]any{"spec": map[string]any{},
			"status": map[string]any{"allocation": map[string]any{"devices": map[string]any{"results": results}}, "reservedFor": reserved}})
	}
	gated := pod("gated", "z", "", "Pending", "", nil)
	gated["spec"].(map[string]any)["schedulingGates"] = []any{map[string]any{"name": "g"}}
	cases := []struct {
		name     string
		deny     string
		pods     []map[string]any
		claims   []map[string]any
		classes  []map[string]any
		cpu      string // gpu-0's free cpu
		roce     int64  // gpu-0's free roce devices
		pending  []string
		drivers  map[string]string
		extended map[corev1.ResourceName]string
		note     string
		blind    string
	}{
		{name: "a bound running pod is subtracted", pods: []map[string]any{pod("p", "z", "gpu-0", "Running", "", nil)}, cpu: "90", roce: 8},
		{name: "finished and deleting pods are not", pods: []map[string]any{pod("s", "z", "gpu-0", "Succeeded", "", nil), pod("f", "z", "gpu-0", "Failed", "", nil),
			pod("d", "z", "gpu-0", "Running", "", map[string]any{"deletionTimestamp": "2026-01-01T00:00:00Z"})}, cpu: "100", roce: 8},
		{name: "the input's own pods are not, in its namespace only", pods: []map[string]any{pod("own", "a", "gpu-0", "Running", "run", nil), pod("other", "b", "gpu-0", "Running", "run", nil)}, cpu: "90", roce: 8},
		{name: "a pod bound to an uncounted node is ignored", pods: []map[string]any{pod("p", "z", "elsewhere", "Running", "", nil)}, cpu: "100", roce: 8},
		{name: "unbound pods wait ahead unless gated", pods: []map[string]any{pod("w", "z", "", "Pending", "", nil), gated}, cpu: "100", roce: 8, pending: []string{"Pod z/w"}},
		{name: "an allocated claim's devices are subtracted", claims: []map[string]any{claim(3, "x")}, cpu: "100", roce: 5},
		{name: "a claim only the input's pods hold is not", pods: []map[string]any{pod("own", "a", "gpu-0", "Running", "run", nil)}, claims: []map[string]any{claim(3, "own")}, cpu: "100", roce: 8},
		{name: "a claim the input shares with another pod is", pods: []map[string]any{pod("own", "a", "gpu-0", "Running", "run", nil)}, claims: []map[string]any{claim(3, "own", "x")}, cpu: "100", roce: 5},
		{name: "class drivers and extended resources", classes: []map[string]any{class("roce", "roce", ""), class("gpu", "gpu.nvidia.com", "nvidia.com/gpu"),
			obj("resource.k8s.io/v1", "DeviceClass", map[string]any{"name": "all"}, map[string]any{"spec": map[string]any{}}),
			obj("resource.k8s.io/v1", "DeviceClass", map[string]any{"name": "cel"}, map[string]any{"spec": map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{"expression": "device.attributes['x'].y"}}}}})},
			cpu: "100", roce: 8, drivers: map[string]string{"roce": "roce", "gpu": "gpu.nvidia.com", "all": placement.AnyDriver, "cel": ""}, extended: map[corev1.ResourceName]string{"nvidia.com/gpu": "gpu"}},
		{name: "pods refused: a note", deny: "/api/v1/pods", cpu: "100", roce: 8, note: "the pods already bound could not be read (access refused (403 Forbidden): denied by the test), so are not subtracted"},
		{name: "claims refused: a note", deny: "/apis/resource.k8s.io/v1/resourceclaims", cpu: "100", roce: 8, note: "the ResourceClaims already allocated could not be read (access refused"},
		{name: "slices refused: blind", deny: "/apis/resource.k8s.io/v1/resourceslices", cpu: "100", roce: 0, blind: "the ResourceSlices (the devices each node publishes) could not be read (access refused"},
		{name: "classes refused: blind", deny: "/apis/resource.k8s.io/v1/deviceclasses", cpu: "100", roce: 8, drivers: map[string]string{}, blind: "the DeviceClasses (which devices a claim or an extended resource takes) could not be read (access refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			classes := tc.classes
			if classes == nil {
				classes = []map[string]any{class("roce", "roce", "")}
			}
			c := deniedCluster(t, tc.deny, map[string][]map[string]any{
				"/apis/resource.k8s.io/v1/resourceslices": {slice("gpu-0", "roce", 8)},
				"/apis/resource.k8s.io/v1/deviceclasses":  classes,
				"/api/v1/pods":                            tc.pods,
				"/apis/resource.k8s.io/v1/resourceclaims": tc.claims,
			}, nil)
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-0"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourcePods: resource.MustParse("110")}}}
			in := Input{Pods: []PodShape{{Pod: workload.Pod{Namespace: "a", Meta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/instance": "run"}}}}}}
			k := &cache{nodes: &nodeList{nodes: []*corev1.Node{node}, out: kube.Found}, ours: oursOf(in), placing: true}
			f, ahead, g, err := fleetOf(context.Background(), c, k)
			require.NoError(t, err)
			require.Len(t, f.Nodes, 1)
			free := f.Nodes[0].Free[corev1.ResourceCPU]
			assert.Equal(t, tc.cpu, free.String())
			assert.Equal(t, tc.roce, f.Nodes[0].Devices["roce"])
			var pending []string
			for _, r := range ahead {
				pending = append(pending, r.Name)
			}
			assert.Equal(t, tc.pending, pending)
			if tc.drivers == nil {
				tc.drivers = map[string]string{"roce": "roce"}
			}
			assert.Equal(t, tc.drivers, f.Drivers)
			if tc.extended == nil {
				tc.extended = map[corev1.ResourceName]string{}
			}
			assert.Equal(t, tc.extended, f.Extended)
			assertOneOrNone(t, tc.note, g.notes)
			assertOneOrNone(t, tc.blind, g.blind)
		})
	}
}

func assertOneOrNone(t *testing.T, want string, got []string) {
	t.Helper()
	if want == "" {
		assert.Empty(t, got)
		return
	}
	require.Len(t, got, 1)
	assert.Contains(t, got[0], want)
}

// Per node, after what is already bound and allocated: two runs in two
// namespaces, placed one after another; gpu-0's GPUs are held by a running
// pod, gpu-1's NICs by an allocated claim; half the nodes have 8 NICs.
func TestPlacementPerNodeAfterAllocations(t *testing.T) {
	var nodes, slices []map[string]any
	for i, nics := range []int{8, 8, 8, 8, 4, 4} {
		name := "gpu-" + itoa(i)
		nodes = append(nodes, gpuNode(name, 8, map[string]any{"pool": "gpu"}))
		slices = append(slices, slice(name, "roce", nics))
	}
	nodes = append(nodes, gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}))
	running := obj("v1", "Pod", map[string]any{"name": "other", "namespace": "z"}, map[string]any{
		"spec":   map[string]any{"nodeName": "gpu-0", "containers": []any{map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 8}}}}},
		"status": map[string]any{"phase": "Running"}})
	var results []any
	for i := 0; i < 8; i++ {
		results = append(results, map[string]any{"request": "nics", "driver": "roce", "pool": "gpu-1", "device": "d" + itoa(i)})
	}
	claim := obj("resource.k8s.io/v1", "ResourceClaim", map[string]any{"name": "held", "namespace": "z"}, map[string]any{
		"spec":   map[string]any{},
		"status": map[string]any{"allocation": map[string]any{"devices": map[string]any{"results": results}}}})
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": nodes, "/apis/resource.k8s.io/v1/resourceslices": slices,
		"/apis/resource.k8s.io/v1/deviceclasses":  {class("roce", "roce", "")},
		"/api/v1/pods":                            {running},
		"/apis/resource.k8s.io/v1/resourceclaims": {claim},
	})
	docs := append(runDocs(t, "a", "first", 1, 8), runDocs(t, "b", "second", 2, 8)...)
	lines := nodeLines(t, c, docs)
	first, second := lines["Nodes RayJob/first worker group gpu"], lines["Nodes RayJob/second worker group gpu"]
	assert.Equal(t, OK, first.State, first.Detail)
	assert.Equal(t, "a", first.Namespace, "several namespaces: each line names its own")
	assert.Equal(t, Missing, second.State, second.Detail)
	assert.Contains(t, second.Detail, "1 of 2 placed")
	assert.True(t, strings.Contains(lines["Run RayJob/second"].Detail, "hold 8 nvidia.com/gpu idle"), lines["Run RayJob/second"].Detail)
}

// A pod already waiting for the scheduler that fits now is bound before
// the input's pods are even created: it is placed first, and the run
// gets what it leaves. A pod held by a scheduling gate waits on.
func TestPlacementAfterPodsInLine(t *testing.T) {
	waiting := func(name string, gated bool) map[string]any {
		spec := map[string]any{"nodeSelector": map[string]any{"pool": "gpu"},
			"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 8}}}}}
		if gated {
			spec["schedulingGates"] = []any{map[string]any{"name": "example.com/gate"}}
		}
		return obj("v1", "Pod", map[string]any{"name": name, "namespace": "z", "creationTimestamp": "2026-01-01T00:00:00Z"},
			map[string]any{"spec": spec, "status": map[string]any{"phase": "Pending"}})
	}
	c := fakeCluster(t, map[string][]map[string]any{
		"/api/v1/nodes": {gpuNode("cpu-0", 0, map[string]any{"pool": "cpu"}), gpuNode("gpu-0", 8, map[string]any{"pool": "gpu"}), gpuNode("gpu-1", 8, map[string]any{"pool": "gpu"})},
		"/apis/resource.k8s.io/v1/resourceslices": {}, "/apis/resource.k8s.io/v1/deviceclasses": {}, "/apis/resource.k8s.io/v1/resourceclaims": {},
		"/api/v1/pods": {waiting("first", false), waiting("gated", true)},
	})
	lines := nodeLines(t, c, runDocs(t, "a", "j", 2, 0))
	w := lines["Nodes RayJob/j worker group gpu"]
	assert.Equal(t, Missing, w.State, w.Detail)
	assert.Contains(t, w.Detail, "1 of 2 placed")
}

// Pods waiting for the scheduler go in its queue order: the higher
// priority first, then the oldest.
func TestAheadOf(t *testing.T) {
	at := func(name string, prio *int32, minute int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "z", CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))},
			Spec: corev1.PodSpec{Priority: prio}}
	}
	high, low := int32(10), int32(-1)
	var got []string
	for _, r := range aheadOf([]*corev1.Pod{at("new", nil, 2), at("low", &low, 0), at("old", nil, 1), at("high", &high, 3)}) {
		require.Len(t, r.Shapes, 1)
		assert.Equal(t, "1", r.Shapes[0].Requests.Pods().String(), "each takes a pod slot")
		got = append(got, r.Name)
	}
	assert.Equal(t, []string{"Pod z/high", "Pod z/old", "Pod z/new", "Pod z/low"}, got)
}

func TestOwnOnly(t *testing.T) {
	ref := func(uids ...types.UID) []resourcev1.ResourceClaimConsumerReference {
		var out []resourcev1.ResourceClaimConsumerReference
		for _, u := range uids {
			out = append(out, resourcev1.ResourceClaimConsumerReference{UID: u})
		}
		return out
	}
	own := map[types.UID]bool{"a": true, "b": true}
	cases := []struct {
		name     string
		reserved []resourcev1.ResourceClaimConsumerReference
		own      map[types.UID]bool
		want     bool
	}{
		{"held by the input's pods only", ref("a", "b"), own, true},
		{"shared with another pod", ref("a", "x"), own, false},
		{"reserved by nobody", nil, own, false},
		{"the input runs no pod yet", ref("a"), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, ownOnly(c.reserved, c.own)) })
	}
}

// driverOf reads only `device.driver == "..."` selectors, all naming the
// same driver; any other selector is reported by its index.
func TestDriverOf(t *testing.T) {
	sel := func(exprs ...string) []resourcev1.DeviceSelector {
		var out []resourcev1.DeviceSelector
		for _, e := range exprs {
			out = append(out, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
		}
		return out
	}
	cases := []struct {
		name      string
		selectors []resourcev1.DeviceSelector
		driver    string
		bad       int
	}{
		{"no selector: any driver", nil, "", -1},
		{"double quotes", sel(`device.driver == "gpu.nvidia.com"`), "gpu.nvidia.com", -1},
		{"single quotes and spaces", sel(`  device.driver=='roce'  `), "roce", -1},
		{"the same driver twice", sel(`device.driver == "roce"`, `device.driver == 'roce'`), "roce", -1},
		{"two drivers", sel(`device.driver == "roce"`, `device.driver == "ib"`), "", 1},
		{"another expression", sel(`device.driver == "roce"`, `device.attributes["roce"].rdma`), "", 1},
		{"a selector without CEL", []resourcev1.DeviceSelector{{}}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			driver, bad := driverOf(&resourcev1.DeviceClass{Spec: resourcev1.DeviceClassSpec{Selectors: c.selectors}})
			assert.Equal(t, c.driver, driver)
			assert.Equal(t, c.bad, bad)
		})
	}
}
