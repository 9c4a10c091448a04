package preflight

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// ClaimRequests reads every exact-count request of the rendered claim
// templates (count 1 when unset, mode All skipped) and one channel per pod
// of a ComputeDomain's channel template.
func TestClaimRequests(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []ClaimRequest
		err        string
	}{
		{name: "exact counts, the default count, mode All skipped", yaml: `
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nics, namespace: a}
spec: {spec: {devices: {requests: [
  {name: roce, exactly: {deviceClassName: roce, count: 8}},
  {name: one, exactly: {deviceClassName: ib}},
  {name: all, exactly: {deviceClassName: gpu, allocationMode: All}},
  {name: alternatives, firstAvailable: [{name: x, deviceClassName: gpu}]}]}}}`,
			want: []ClaimRequest{{Namespace: "a", Template: "nics", Request: "roce", Class: "roce", Count: 8}, {Namespace: "a", Template: "nics", Request: "one", Class: "ib", Count: 1}}},
		{name: "a ComputeDomain's channel template", yaml: `
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: cd, namespace: a}
spec: {numNodes: 0, channel: {resourceClaimTemplate: {name: cd-channel}}}
---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: none, namespace: a}
spec: {numNodes: 0}`,
			want: []ClaimRequest{{Namespace: "a", Template: "cd-channel", Request: "channel", Class: prereq.ComputeDomainChannelClass, Count: 1, channel: true}}},
		{name: "other kinds ask nothing", yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
		{name: "a malformed template names itself", yaml: "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: bad}\nspec: {spec: {devices: {requests: [{name: r, exactly: {count: many}}]}}}\n",
			err: "ResourceClaimTemplate bad: json: cannot unmarshal string into Go struct field ExactDeviceRequest.spec.spec.devices.requests.exactly.count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, err := rendered.Decode("in.yaml", []byte(c.yaml))
			require.NoError(t, err)
			got, err := ClaimRequests(docs)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// A claim request is ok when one node publishes as many devices of its
// class's driver, missing when none does however many nodes there are,
// and cannot tell when the class or the slices cannot be read or the
// class's selector is not a driver's.
func TestDeviceLines(t *testing.T) {
	celClass := obj("resource.k8s.io/v1", "DeviceClass", map[string]any{"name": "cel"},
		map[string]any{"spec": map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{"expression": "device.attributes['x'].rdma"}}}}})
	anyClass := obj("resource.k8s.io/v1", "DeviceClass", map[string]any{"name": "any"}, map[string]any{"spec": map[string]any{}})
	gets := map[string]map[string]any{
		"/apis/resource.k8s.io/v1/deviceclasses/roce": class("roce", "roce", ""),
		"/apis/resource.k8s.io/v1/deviceclasses/cel":  celClass,
		"/apis/resource.k8s.io/v1/deviceclasses/any":  anyClass,
	}
	// n0 publishes 4 RoCE NICs in two slices and 2 of another driver; n1 3.
	slices := []map[string]any{slice("n0", "roce", 2), slice("n0", "roce", 2), slice("n0", "ib", 2), slice("n1", "roce", 3)}
	slices[1]["metadata"] = map[string]any{"name": "n0-roce-2"}
	// Network-attached pools: no node name, or an empty one.
	unnamed, empty := slice("", "roce", 16), slice("", "roce", 16)
	delete(unnamed["spec"].(map[string]any), "nodeName")
	empty["metadata"] = map[string]any{"name": "empty"}
	slices = append(slices, unnamed, empty)
	cases := []struct {
		name, class, deny string
		count             int64
		state             State
		detail            string
	}{
		{name: "one node publishes enough", class: "roce", count: 4, state: OK, detail: "node n0 publishes 4"},
		{name: "no node does, a network pool is no node's", class: "roce", count: 5, state: Missing, detail: "no node publishes 5: the most on one node is 4"},
		{name: "a class without selectors takes every driver", class: "any", count: 6, state: OK, detail: "node n0 publishes 6"},
		{name: "a selector not evaluated", class: "cel", count: 1, state: CannotTell, detail: `DeviceClass cel selectors[0]: not a device.driver == "..." selector`},
		{name: "an absent class", class: "gone", count: 1, state: CannotTell, detail: "DeviceClass gone: "},
		{name: "the slices refused", class: "roce", count: 1, deny: "/apis/resource.k8s.io/v1/resourceslices", state: CannotTell, detail: "access refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := deniedCluster(t, c.deny, map[string][]map[string]any{"/apis/resource.k8s.io/v1/resourceslices": slices}, gets)
			lines, err := deviceLines(context.Background(), conn, []ClaimRequest{
				{Namespace: "a", Template: "t", Request: "r", Class: c.class, Count: c.count},
				{Namespace: "a", Template: "cd-channel", Request: "channel", Class: "gone", Count: 1, channel: true},
			})
			require.NoError(t, err)
			require.Len(t, lines, 1, "a channel request has no Devices line")
			l := lines[0]
			assert.Equal(t, "Devices", l.Kind)
			assert.Equal(t, "t r", l.Name)
			assert.Equal(t, c.state, l.State, l.Detail)
			assert.Contains(t, l.Detail, c.detail)
		})
	}
	lines, err := deviceLines(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.Nil(t, lines, "no claim: nothing read")
}
