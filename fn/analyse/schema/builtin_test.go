package schema

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// A built-in kind decodes strictly into its k8s.io/api type and is held to
// the fields the API server requires; a kind not listed is unknown.
func TestCheckBuiltin(t *testing.T) {
	container := []any{map[string]any{"name": "c", "image": "i"}}
	named := map[string]any{"name": "x"}
	svc := func(spec map[string]any) map[string]any { return map[string]any{"metadata": named, "spec": spec} }
	port := func(n any, name string) map[string]any {
		p := map[string]any{"port": n}
		if name != "" {
			p["name"] = name
		}
		return p
	}
	rct := func(reqs ...any) map[string]any {
		return map[string]any{"metadata": named, "spec": map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": reqs}}}}
	}
	exactly := map[string]any{"deviceClassName": "gpu.nvidia.com"}
	cases := []struct {
		name, apiVersion, kind string
		data                   map[string]any
		want                   []string // "path: message"
	}{
		{"Deployment whose selector selects its template", "apps/v1", "Deployment", deployment(map[string]any{"app": "a"}, map[string]any{"app": "a"}).Data, nil},
		{"Deployment without a selector", "apps/v1", "Deployment", map[string]any{"metadata": named,
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": container}}}}, []string{"spec.selector: is required"}},
		{"Deployment with an empty selector", "apps/v1", "Deployment", deployment(map[string]any{}, map[string]any{"app": "a"}).Data,
			[]string{"spec.template.metadata.labels: do not match spec.selector; the API server rejects a Deployment whose template its selector does not select"}},
		{"Deployment with a bad selector", "apps/v1", "Deployment", map[string]any{"metadata": named, "spec": map[string]any{
			"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Near"}}},
			"template": map[string]any{"spec": map[string]any{"containers": container}}}},
			[]string{`spec.selector: "Near" is not a valid label selector operator`}},
		{"Pod without a name or containers", "v1", "Pod", map[string]any{"spec": map[string]any{}},
			[]string{"metadata.name: is required", "spec.containers: is required (at least one container)"}},
		{"Pod container without a name or image", "v1", "Pod", map[string]any{"metadata": named, "spec": map[string]any{"containers": []any{map[string]any{}}}},
			[]string{"spec.containers[0].name: is required", "spec.containers[0].image: is required"}},
		{"Service without ports", "v1", "Service", svc(map[string]any{}), []string{"spec.ports: is required (at least one port)"}},
		{"headless Service without ports", "v1", "Service", svc(map[string]any{"clusterIP": "None"}), nil},
		{"ExternalName Service without ports", "v1", "Service", svc(map[string]any{"type": "ExternalName"}), nil},
		{"Service port out of range, unnamed among two", "v1", "Service", svc(map[string]any{"ports": []any{port(0, "a"), port(65536, "")}}),
			[]string{"spec.ports[0].port: found 0; expected 1-65535", "spec.ports[1].port: found 65536; expected 1-65535",
				"spec.ports[1].name: is required when a Service has more than one port"}},
		{"one unnamed Service port", "v1", "Service", svc(map[string]any{"ports": []any{port(65535, "")}}), nil},
		{"ConfigMap key", "v1", "ConfigMap", map[string]any{"metadata": named, "data": map[string]any{"a/b": "x"}},
			[]string{"data.a/b: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"}},
		{"ResourceClaimTemplate request", vocab.DRAAPIVersion, "ResourceClaimTemplate", rct(map[string]any{"name": "gpu", "exactly": exactly}), nil},
		{"ResourceClaimTemplate request without a name or device", vocab.DRAAPIVersion, "ResourceClaimTemplate", rct(map[string]any{}),
			[]string{"spec.spec.devices.requests[0].name: is required", "spec.spec.devices.requests[0]: expected exactly one of exactly and firstAvailable"}},
		{"ResourceClaimTemplate request with both", vocab.DRAAPIVersion, "ResourceClaimTemplate",
			rct(map[string]any{"name": "gpu", "exactly": map[string]any{}, "firstAvailable": []any{map[string]any{"name": "a", "deviceClassName": "d"}}}),
			[]string{"spec.spec.devices.requests[0]: expected exactly one of exactly and firstAvailable", "spec.spec.devices.requests[0].exactly.deviceClassName: is required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs, known := checkBuiltin(c.apiVersion, c.kind, c.data)
			assert.True(t, known)
			var got []string
			for _, v := range vs {
				got = append(got, v.Path+": "+v.Msg)
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// A field the type has not, or of the wrong type, is a finding on the
// whole object; a kind not built in is not known here.
func TestCheckBuiltinDecode(t *testing.T) {
	cases := []struct {
		name, apiVersion, kind string
		data                   map[string]any
		known                  bool
		want                   string // in the one finding's message
	}{
		{"unknown field", "v1", "ConfigMap", map[string]any{"metadata": map[string]any{"name": "x"}, "datum": 1}, true, `unknown field "datum"`},
		{"mistyped field", "v1", "ConfigMap", map[string]any{"metadata": map[string]any{"name": "x"}, "data": 1}, true, "does not decode as v1 ConfigMap"},
		{"not built in", "batch/v1", "Job", map[string]any{}, false, ""},
		{"an older version", "apps/v1beta1", "Deployment", map[string]any{}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs, known := checkBuiltin(c.apiVersion, c.kind, c.data)
			assert.Equal(t, c.known, known)
			if c.want == "" {
				assert.Empty(t, vs)
				return
			}
			if assert.Len(t, vs, 1) {
				assert.Empty(t, vs[0].Path)
				assert.Contains(t, vs[0].Msg, c.want)
			}
		})
	}
}
