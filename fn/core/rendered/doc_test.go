package rendered_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// FromData reads kind, name and namespace from the object's own fields,
// and leaves each empty where the field is absent or not a string, never
// failing: the callers refuse a document without kind or name by name.
func TestFromData(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		data                  map[string]any
		kind, objName, nspace string
	}{
		{name: "namespaced", data: map[string]any{"kind": "RayJob", "metadata": map[string]any{"name": "j", "namespace": "team"}}, kind: "RayJob", objName: "j", nspace: "team"},
		{name: "cluster-scoped", data: map[string]any{"kind": "DeviceClass", "metadata": map[string]any{"name": "gpu"}}, kind: "DeviceClass", objName: "gpu"},
		{name: "no metadata", data: map[string]any{"kind": "ConfigMap"}, kind: "ConfigMap"},
		{name: "metadata not a map", data: map[string]any{"kind": "ConfigMap", "metadata": "x"}, kind: "ConfigMap"},
		{name: "fields not strings", data: map[string]any{"kind": 3, "metadata": map[string]any{"name": true, "namespace": []any{"a"}}}},
		{name: "empty", data: map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rendered.FromData(tc.data)
			assert.Equal(t, tc.kind, d.Kind)
			assert.Equal(t, tc.objName, d.Name)
			assert.Equal(t, tc.nspace, d.Namespace)
			assert.Equal(t, tc.data, d.Data, "the data is the document's, as given")
			assert.Nil(t, d.Obj, "no typed object behind data read back")
		})
	}
}
