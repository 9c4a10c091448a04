package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// One walk of the Pods sorts each: a finished pod counts nowhere; one of
// the input's runs (its identity label in its namespace) is the input's
// own unless being deleted; a bound one counts on a listed node under its
// scheduler, deleting or not; an unbound one waits ahead when placing,
// unless gated or being deleted.
func TestReadPods(t *testing.T) {
	pod := func(name, node, scheduler string, more map[string]any) map[string]any {
		meta := map[string]any{"name": name, "namespace": "z", "uid": name}
		spec := map[string]any{"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "10"}}}}}
		status := map[string]any{"phase": "Running"}
		if node != "" {
			spec["nodeName"] = node
		}
		if scheduler != "" {
			spec["schedulerName"] = scheduler
		}
		for k, v := range more {
			switch k {
			case "phase":
				status[k] = v
			case "schedulingGates":
				spec[k] = v
			default:
				meta[k] = v
			}
		}
		return obj("v1", "Pod", meta, map[string]any{"spec": spec, "status": status})
	}
	deleting := map[string]any{"deletionTimestamp": "2026-01-01T00:00:00Z"}
	ours := map[string]any{"labels": map[string]any{"app.kubernetes.io/instance": "run"}}
	cases := []struct {
		name    string
		pods    []map[string]any
		placing bool
		held    map[scheduler.Holder]string // n1's cpu per holder
		own     []types.UID
		pending []string
	}{
		{name: "bound pods count per scheduler", pods: []map[string]any{pod("a", "n1", "", nil), pod("b", "n1", "kai-scheduler", nil), pod("c", "n1", "", nil)},
			held: map[scheduler.Holder]string{{Scheduler: ""}: "20", {Scheduler: "kai-scheduler"}: "10"}},
		{name: "a deleting pod counts apart", pods: []map[string]any{pod("a", "n1", "", deleting)},
			held: map[scheduler.Holder]string{{Deleting: true}: "10"}},
		{name: "finished pods count nowhere", pods: []map[string]any{pod("s", "n1", "", map[string]any{"phase": "Succeeded"}), pod("f", "", "", map[string]any{"phase": "Failed"})}, placing: true},
		{name: "a pod on a node not listed is not counted", pods: []map[string]any{pod("a", "n9", "", nil)}},
		{name: "the input's own: their UIDs, not counted", pods: []map[string]any{pod("own", "n1", "", ours), pod("gone", "n1", "", map[string]any{"labels": ours["labels"], "deletionTimestamp": "2026-01-01T00:00:00Z"})},
			own: []types.UID{"own"}},
		{name: "unbound pods wait when placing, unless gated or deleting", placing: true, pods: []map[string]any{pod("w", "", "", nil),
			pod("g", "", "", map[string]any{"schedulingGates": []any{map[string]any{"name": "g"}}}), pod("d", "", "", deleting)}, pending: []string{"w"}},
		{name: "none are kept when not placing", pods: []map[string]any{pod("w", "", "", nil)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := deniedCluster(t, "", map[string][]map[string]any{"/api/v1/pods": tc.pods}, nil)
			nodes := []*corev1.Node{{}, {}}
			nodes[0].Name, nodes[1].Name = "n1", "n2"
			r := readPods(context.Background(), c, nodes, map[string]bool{"z/run": true}, tc.placing)
			require.NoError(t, r.err)
			require.Equal(t, kube.Found, r.out)
			held := map[scheduler.Holder]string{}
			for h, l := range r.bound.Held["n1"] {
				cpu := l[corev1.ResourceCPU]
				held[h] = cpu.String()
			}
			if tc.held == nil {
				tc.held = map[scheduler.Holder]string{}
			}
			assert.Equal(t, tc.held, held)
			assert.Empty(t, r.bound.Held["n2"], "nothing is bound to n2")
			var own []types.UID
			for uid := range r.own {
				own = append(own, uid)
			}
			assert.Equal(t, tc.own, own)
			var pending []string
			for _, p := range r.pending {
				pending = append(pending, p.Name)
			}
			assert.Equal(t, tc.pending, pending)
		})
	}
}

// A preflight reads the cluster's Pods once however many lines read them:
// the KAI Queue line (through the reader) and placement (fleetOf).
func TestPodsReadOnce(t *testing.T) {
	var podLists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		items := []map[string]any{}
		switch r.URL.Path {
		case "/api/v1/pods":
			podLists.Add(1)
		case "/api/v1/nodes":
			items = append(items, gpuNode("n1", 8, nil))
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": items})
	}))
	t.Cleanup(srv.Close)
	c, err := kube.FromConfig(&rest.Config{Host: srv.URL}, "a", kube.Options{})
	require.NoError(t, err)
	k := &cache{ours: map[string]bool{}, placing: true}
	_, out, err := reader{c, k}.BoundPods(context.Background())
	require.NoError(t, err)
	require.Equal(t, scheduler.Found, out)
	_, _, _, err = fleetOf(context.Background(), c, k)
	require.NoError(t, err)
	assert.Equal(t, int32(1), podLists.Load())
}
