package kustomizeconf

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// crd is a CustomResourceDefinition of version v whose spec schema is spec
// (YAML flow style), and whose status holds a keyed list.
func crd(v, spec string) []byte {
	return []byte("spec:\n  versions:\n  - name: " + v + "\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          status: {type: object, properties: {conditions: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type]}}}\n          spec: " + spec + "\n")
}

// dig follows keys through nested maps.
func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

// OpenAPI keeps only the way to lists with a merge key, each list keyed
// by KubeRay's key, the Go tags or the CRD's one list-map key, and fails
// on a CRD that does not match the Go types, naming the field.
func TestOpenAPI(t *testing.T) {
	const (
		groups  = `{type: object, properties: {workerGroupSpecs: {type: array, items: {type: object, properties: {groupName: {type: string}}}}}}`
		jobSpec = `{type: object, properties: {suspend: {type: boolean}, rayClusterSpec: ` + groups + `}}`
	)
	cases := []struct {
		name    string
		cluster []byte // the RayCluster CRD; nil: none
		err     string
	}{
		{"the lists with a key, nothing else", crd("v1", `{type: object, properties: {suspend: {type: boolean}, workerGroupSpecs: {type: array,
			items: {type: object, properties: {scaleStrategy: {type: object, properties: {workersToDelete: {type: array, items: {type: string}}}}}}}}}`), ""},
		{"no CRD", nil, "no CRD for RayCluster"},
		{"not the version", crd("v2", groups), "RayCluster CRD: no openAPIV3Schema for version v1"},
		{"a field the Go type lacks", crd("v1", `{type: object, properties: {nosuch: {type: string}}}`),
			"RayCluster.spec.nosuch: in the CRD but not in the Go type v1.RayClusterSpec; expected the CRD and KubeRay's module to be the same version"},
		{"an array the Go type does not hold as one", crd("v1", `{type: object, properties: {headGroupSpec: {type: array}}}`),
			"RayCluster.spec.headGroupSpec: an array in the CRD, v1.HeadGroupSpec in the Go type"},
		{"no list with a key", crd("v1", `{type: object, properties: {suspend: {type: boolean}}}`),
			"RayCluster: no list with a merge key found; expected worker groups and containers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crds := map[string][]byte{"RayJob": crd("v1", jobSpec)}
			if tc.cluster != nil {
				crds["RayCluster"] = tc.cluster
			}
			b, err := OpenAPI(crds)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(b, &doc))
			spec := dig(doc, "definitions", "io.ray.v1.RayCluster", "properties", "spec").(map[string]any)
			require.Equal(t, map[string]any{"type": "object", "properties": map[string]any{"workerGroupSpecs": map[string]any{
				"type": "array", "items": map[string]any{"type": "object"},
				"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "groupName"}}}, spec)
			require.Equal(t, "groupName", dig(doc, "definitions", "io.ray.v1.RayJob", "properties", "spec", "properties", "rayClusterSpec",
				"properties", "workerGroupSpecs", "x-kubernetes-patch-merge-key"))
			containers := dig(doc, "definitions", "io.k8s.api.apps.v1.Deployment", "properties", "spec", "properties", "template",
				"properties", "spec", "properties", "containers").(map[string]any)
			require.Equal(t, "name", containers["x-kubernetes-patch-merge-key"], "a built-in kind's keys from its Go tags")
			require.Equal(t, "merge", containers["x-kubernetes-patch-strategy"])
			require.Nil(t, dig(doc, "definitions", "io.ray.v1.RayCluster", "properties", "status"))
		})
	}
}

// A list's key: KubeRay's first, then the Go field's merge tags, then the
// CRD's list-map key when it is one; else the list is replaced whole.
func TestMergeKey(t *testing.T) {
	type tagged struct {
		Merge   []int `patchStrategy:"merge" patchMergeKey:"name"`
		Both    []int `patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
		Replace []int `patchStrategy:"replace" patchMergeKey:"name"`
		None    []int
	}
	field := func(name string) reflect.StructField {
		f, _ := reflect.TypeFor[tagged]().FieldByName(name)
		return f
	}
	mapKeys := func(keys ...any) map[string]any {
		return map[string]any{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys}
	}
	cases := []struct {
		name, field, rayKey string
		schema              map[string]any
		want                string // strategy/key
	}{
		{"KubeRay's key first", "Merge", "groupName", mapKeys("id"), "merge/groupName"},
		{"the Go tags", "Merge", "", mapKeys("id"), "merge/name"},
		{"the Go tags' whole strategy", "Both", "", nil, "merge,retainKeys/name"},
		{"a replace tag: the CRD's key", "Replace", "", mapKeys("id"), "merge/id"},
		{"the CRD's one list-map key", "None", "", mapKeys("id"), "merge/id"},
		{"two list-map keys: replaced", "None", "", mapKeys("a", "b"), "/"},
		{"an atomic list: replaced", "None", "", map[string]any{"x-kubernetes-list-type": "atomic"}, "/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			strategy, key := mergeKey(tc.schema, field(tc.field), tc.rayKey)
			require.Equal(t, tc.want, strategy+"/"+key)
		})
	}
}

// jsonField finds a field by its JSON name, in embedded structs too.
func TestJSONField(t *testing.T) {
	type Inner struct {
		X int `json:"x"`
	}
	type outer struct {
		Inner
		Y int `json:"y,omitempty"`
	}
	for _, tc := range []struct{ name, want string }{{"x", "X"}, {"y", "Y"}, {"z", ""}} {
		f, ok := jsonField(reflect.TypeFor[outer](), tc.name)
		require.Equal(t, tc.want != "", ok, tc.name)
		require.Equal(t, tc.want, f.Name, tc.name)
	}
}
