// Package kustomizeconf generates the files kustomize needs to transform
// rendered runs: the OpenAPI schema with patch merge keys for KubeRay's
// kinds (kustomization `openapi:`) and the transformer configuration with
// every name reference and pod template of a run (`configurations:`).
// Both are derived, not written by hand: the schema from the vendored CRDs
// (fn/analyse/schema/crds) and the Go types' patch tags, the configuration from
// the pod templates the Go types contain. `make golden` writes them to
// kustomize/ (TestGoldenKustomizeFiles); `nrl-k8s kustomize-config`
// prints the same bytes (File).
package kustomizeconf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Kinds are the kinds the schema covers, with their Go types.
var Kinds = []struct {
	Group, Version, Kind string
	Type                 reflect.Type
}{
	{vocab.RayGroup, vocab.RayVersion, "RayCluster", reflect.TypeFor[rayv1.RayCluster]()},
	{vocab.RayGroup, vocab.RayVersion, "RayJob", reflect.TypeFor[rayv1.RayJob]()},
}

// builtinKinds are the Kubernetes kinds whose patch merge keys the file
// carries too: kustomize reads only the custom schema once `openapi:` names
// one, so without them a patch of a profile's Deployment (or any workload
// of the same kustomization) would replace its containers. Their keys are
// k8s.io/api's patch tags, as in Kubernetes' own OpenAPI.
var builtinKinds = []struct {
	Group, Version, Kind, Definition string
	Type                             reflect.Type
}{
	{"apps", "v1", "DaemonSet", "io.k8s.api.apps.v1.DaemonSet", reflect.TypeFor[appsv1.DaemonSet]()},
	{"apps", "v1", "Deployment", "io.k8s.api.apps.v1.Deployment", reflect.TypeFor[appsv1.Deployment]()},
	{"apps", "v1", "StatefulSet", "io.k8s.api.apps.v1.StatefulSet", reflect.TypeFor[appsv1.StatefulSet]()},
	{"batch", "v1", "CronJob", "io.k8s.api.batch.v1.CronJob", reflect.TypeFor[batchv1.CronJob]()},
	{"batch", "v1", "Job", "io.k8s.api.batch.v1.Job", reflect.TypeFor[batchv1.Job]()},
	{"", "v1", "Pod", "io.k8s.api.core.v1.Pod", reflect.TypeFor[corev1.Pod]()},
	{"", "v1", "Service", "io.k8s.api.core.v1.Service", reflect.TypeFor[corev1.Service]()},
}

// pruneGo is prune for a kind without a CRD: the schema of the paths of
// Go type t that lead to a list with a patch merge key.
func pruneGo(t reflect.Type, depth int) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 12 {
		return nil
	}
	kept := map[string]any{}
	var fields func(t reflect.Type)
	fields = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && (name == "" || strings.Contains(tag, "inline")) {
				if f.Type.Kind() == reflect.Struct {
					fields(f.Type)
				}
				continue
			}
			if name == "" || name == "-" || name == "status" || !f.IsExported() {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() != reflect.Slice {
				if sub := pruneGo(ft, depth+1); sub != nil {
					kept[name] = sub
				}
				continue
			}
			below := pruneGo(ft.Elem(), depth+1)
			strategy, key := mergeKey(nil, f, "")
			if key == "" && below == nil {
				continue
			}
			if below == nil {
				below = map[string]any{"type": "object"}
			}
			out := map[string]any{"type": "array", "items": below}
			if key != "" {
				out["x-kubernetes-patch-strategy"] = strategy
				out["x-kubernetes-patch-merge-key"] = key
			}
			kept[name] = out
		}
	}
	fields(t)
	if len(kept) == 0 {
		return nil
	}
	return map[string]any{"type": "object", "properties": kept}
}

// rayMergeKeys are the lists KubeRay identifies by a key its Go types do
// not tag: a worker group is its groupName (KubeRay refuses two groups of
// one name), so a patch naming a group changes that group.
var rayMergeKeys = map[reflect.Type]map[string]string{
	reflect.TypeFor[rayv1.RayClusterSpec](): {"workerGroupSpecs": "groupName"},
}

// OpenAPI returns the swagger 2.0 document kustomize's `openapi: {path: ...}`
// reads: one definition per kind, holding only the properties on the way to
// a list with a merge key, each such list carrying
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key. crds maps a
// kind to its CustomResourceDefinition YAML.
//
// A list's key comes from, in order: KubeRay's key (rayMergeKeys), the
// patchStrategy/patchMergeKey tags of the Go field (k8s.io/api's, as the
// API server's strategic merge uses them), the CRD's own
// x-kubernetes-list-type: map with one list-map key.
func OpenAPI(crds map[string][]byte) ([]byte, error) {
	defs := map[string]any{}
	for _, k := range Kinds {
		data, ok := crds[k.Kind]
		if !ok {
			return nil, fmt.Errorf("no CRD for %s", k.Kind)
		}
		schema, err := crdSchema(data, k.Version)
		if err != nil {
			return nil, fmt.Errorf("%s CRD: %w", k.Kind, err)
		}
		out, err := prune(schema, k.Type, k.Kind)
		if err != nil {
			return nil, err
		}
		if out == nil {
			return nil, fmt.Errorf("%s: no list with a merge key found; expected worker groups and containers", k.Kind)
		}
		out["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": k.Group, "version": k.Version, "kind": k.Kind}}
		defs["io.ray."+k.Version+"."+k.Kind] = out
	}
	for _, k := range builtinKinds {
		out := pruneGo(k.Type, 0)
		if out == nil {
			return nil, fmt.Errorf("%s: no list with a merge key found", k.Kind)
		}
		out["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": k.Group, "version": k.Version, "kind": k.Kind}}
		defs[k.Definition] = out
	}
	doc := map[string]any{
		"swagger": "2.0",
		"info": map[string]any{
			"title":   "KubeRay RayCluster and RayJob: patch merge keys for kustomize (generated by nrl-k8s from the vendored CRDs; do not edit)",
			"version": vocab.RayAPIVersion,
		},
		"paths":       map[string]any{},
		"definitions": defs,
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// crdSchema is the openAPIV3Schema of version v of a CRD.
func crdSchema(data []byte, v string) (map[string]any, error) {
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, err
	}
	for _, ver := range crd.Spec.Versions {
		if ver.Name == v && ver.Schema.OpenAPIV3Schema != nil {
			return ver.Schema.OpenAPIV3Schema, nil
		}
	}
	return nil, fmt.Errorf("no openAPIV3Schema for version %s", v)
}

// prune walks a CRD schema alongside the Go type it describes and returns
// the part of it that leads to lists with a merge key (nil when none).
// where names the position for errors.
func prune(s map[string]any, t reflect.Type, where string) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch s["type"] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		if t.Kind() != reflect.Struct || len(props) == 0 {
			return nil, nil
		}
		kept := map[string]any{}
		for _, name := range tree.SortedKeys(props) {
			if name == "status" { // written by the operator, never patched
				continue
			}
			f, ok := jsonField(t, name)
			if !ok {
				return nil, fmt.Errorf("%s.%s: in the CRD but not in the Go type %s; expected the CRD and KubeRay's module to be the same version", where, name, t)
			}
			sub, _ := props[name].(map[string]any)
			var out map[string]any
			var err error
			if sub["type"] == "array" {
				out, err = list(sub, f, rayMergeKeys[t][name], where+"."+name)
			} else {
				out, err = prune(sub, f.Type, where+"."+name)
			}
			if err != nil {
				return nil, err
			}
			if out != nil {
				kept[name] = out
			}
		}
		if len(kept) == 0 {
			return nil, nil
		}
		return map[string]any{"type": "object", "properties": kept}, nil
	default:
		return nil, nil
	}
}

// list annotates one array property (and keeps what lies below it).
func list(s map[string]any, f reflect.StructField, rayKey, where string) (map[string]any, error) {
	items, _ := s["items"].(map[string]any)
	elem := f.Type
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() != reflect.Slice {
		return nil, fmt.Errorf("%s: an array in the CRD, %s in the Go type", where, f.Type)
	}
	var below map[string]any
	if items != nil {
		var err error
		below, err = prune(items, elem.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
	}
	strategy, key := mergeKey(s, f, rayKey)
	if key == "" && below == nil {
		return nil, nil
	}
	out := map[string]any{"type": "array"}
	if below != nil {
		out["items"] = below
	} else {
		out["items"] = map[string]any{"type": "object"}
	}
	if key != "" {
		out["x-kubernetes-patch-strategy"] = strategy
		out["x-kubernetes-patch-merge-key"] = key
	}
	return out, nil
}

// mergeKey is the patch strategy and merge key of a list, "" when the list
// is replaced as a whole by a patch.
func mergeKey(s map[string]any, f reflect.StructField, rayKey string) (string, string) {
	if rayKey != "" {
		return "merge", rayKey
	}
	if k := f.Tag.Get("patchMergeKey"); k != "" && strings.Contains(f.Tag.Get("patchStrategy"), "merge") {
		return f.Tag.Get("patchStrategy"), k
	}
	if s["x-kubernetes-list-type"] == "map" {
		if keys, ok := s["x-kubernetes-list-map-keys"].([]any); ok && len(keys) == 1 {
			if k, ok := keys[0].(string); ok {
				return "merge", k
			}
		}
	}
	return "", ""
}

// jsonField finds the field serialised under name, looking into inlined
// (embedded) structs as encoding/json does.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f, true
		}
		if f.Anonymous && (tag == "" || strings.Contains(f.Tag.Get("json"), "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if sub, ok := jsonField(ft, name); ok {
					return sub, true
				}
			}
		}
	}
	return reflect.StructField{}, false
}

// The shipped files, relative to the repository root.
const (
	OpenAPIFile       = "kustomize/openapi/kuberay.json"
	ConfigurationFile = "kustomize/nrl-k8s.configuration.yaml"
)
