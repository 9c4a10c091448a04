package schema_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// fn/analyse/schema does not import the API server's validation, defaulting and CEL
// packages (their package initialisation would cost every nrl-k8s process;
// docs/performance.md): it restates three small pieces in its own code and the
// CRDs' CEL rules as Go. This test is what keeps that honest: the upstream
// packages themselves (linked here, in a test binary only), run as the API
// server runs them on a create, must find exactly what fn/analyse/schema finds on
// every CRD object of every golden and on broken variants of them that
// exercise each kind of finding and every CEL rule.

// upstreamValidator is the API server's own create-time pipeline for one CRD.
type upstreamValidator struct {
	structural *structuralschema.Structural
	schema     validation.SchemaValidator
	cel        *cel.Validator
}

func newUpstream(t *testing.T, file, version string) *upstreamValidator {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(data, &crd))
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil))
		ss, err := structuralschema.NewStructural(&internal)
		require.NoError(t, err)
		sv, _, err := validation.NewSchemaValidator(&internal)
		require.NoError(t, err)
		return &upstreamValidator{structural: ss, schema: sv, cel: cel.NewValidator(ss, true, celconfig.PerCallLimit)}
	}
	t.Fatalf("%s: no version %s", file, version)
	return nil
}

// findings are "field: message" lines as schema.Validate reports them.
func (v *upstreamValidator) findings(d rendered.Doc) []string {
	u := runtime.DeepCopyJSON(jsonNumbers(d.Data).(map[string]any))
	where := "output " + d.Kind + "/" + d.Name
	var out []string
	for _, p := range structuralpruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		out = append(out, where+"."+p+": unknown field; not in the CRD schema (the API server drops it, or refuses it under strict field validation)")
	}
	structuraldefaulting.Default(u, v.structural)
	errs := validation.ValidateCustomResource(nil, u, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, u, nil, celconfig.RuntimeCELCostBudget)
	for _, e := range append(errs, celErrs...) {
		f := where
		if e.Field != "<nil>" && e.Field != "" {
			f += "." + e.Field
		}
		out = append(out, f+": "+e.ErrorBody())
	}
	sort.Strings(out)
	return out
}

func ours(d rendered.Doc) []string {
	var out []string
	for _, x := range schema.Validate("p.yaml", []rendered.Doc{d}) {
		out = append(out, x.Field+": "+x.Message)
	}
	sort.Strings(out)
	return out
}

// jsonNumbers turns the YAML decoder's ints into the int64 JSON decoding gives.
func jsonNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = jsonNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = jsonNumbers(e)
		}
		return out
	case int:
		return int64(t)
	}
	return v
}

// breakage is one edit of an object; it names the finding it provokes.
type breakage struct {
	name string
	kind string                      // "" for every CRD kind
	edit func(m map[string]any) bool // false: the object has no place for this edit
}

func podSpecs(m map[string]any) []map[string]any {
	s := spec(m)
	if rc, ok := s["rayClusterSpec"].(map[string]any); ok {
		s = rc
	}
	var out []map[string]any
	if h, ok := s["headGroupSpec"].(map[string]any); ok {
		out = append(out, h["template"].(map[string]any)["spec"].(map[string]any))
	}
	if ws, ok := s["workerGroupSpecs"].([]any); ok {
		for _, w := range ws {
			out = append(out, w.(map[string]any)["template"].(map[string]any)["spec"].(map[string]any))
		}
	}
	return out
}

func firstContainer(m map[string]any) map[string]any {
	ps := podSpecs(m)
	if len(ps) == 0 {
		return nil
	}
	cs, _ := ps[0]["containers"].([]any)
	if len(cs) == 0 {
		return nil
	}
	return cs[0].(map[string]any)
}

var breakages = []breakage{
	{"unknown field", "", func(m map[string]any) bool { spec(m)["surplus"] = "x"; return true }},
	{"unknown nested field", "", func(m map[string]any) bool {
		c := firstContainer(m)
		if c != nil {
			c["imageName"] = "x"
		}
		return c != nil
	}},
	{"wrong type", "", func(m map[string]any) bool {
		c := firstContainer(m)
		if c != nil {
			c["name"] = int64(3)
		}
		return c != nil
	}},
	{"int-or-string as a list", "", func(m map[string]any) bool {
		c := firstContainer(m)
		if c != nil {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": []any{"1"}}, "requests": map[string]any{"memory": true}}
		}
		return c != nil
	}},
	{"required field missing", "", func(m map[string]any) bool {
		c := firstContainer(m)
		if c != nil {
			delete(c, "name")
		}
		return c != nil
	}},
	{"enum", "", func(m map[string]any) bool {
		s := spec(m)
		if rc, ok := s["rayClusterSpec"].(map[string]any); ok {
			s = rc
		}
		if _, ok := s["headGroupSpec"]; !ok {
			return false
		}
		s["autoscalerOptions"] = map[string]any{"upscalingMode": "Eager"}
		return true
	}},
	{"integer out of int32 range and negative", "", func(m map[string]any) bool {
		ps := podSpecs(m)
		if len(ps) > 0 {
			ps[0]["terminationGracePeriodSeconds"] = "long"
			ps[0]["priority"] = int64(1) << 40
		}
		return len(ps) > 0
	}},
	{"managedBy rule", "", func(m map[string]any) bool {
		if m["kind"] == "ComputeDomain" {
			return false
		}
		spec(m)["managedBy"] = "someone-else"
		return true
	}},
	{"managedBy accepted", "", func(m map[string]any) bool {
		if m["kind"] == "ComputeDomain" {
			return false
		}
		spec(m)["managedBy"] = "kueue.x-k8s.io/multikueue"
		return true
	}},
	{"deletionStrategy: legacy and rules together", "RayJob", func(m map[string]any) bool {
		spec(m)["deletionStrategy"] = map[string]any{"onSuccess": map[string]any{"policy": "DeleteCluster"},
			"onFailure": map[string]any{"policy": "DeleteNone"}, "deletionRules": []any{map[string]any{"policy": "DeleteCluster", "condition": map[string]any{"jobStatus": "SUCCEEDED", "ttlSeconds": int64(10)}}}}
		return true
	}},
	{"deletionStrategy: one legacy policy", "RayJob", func(m map[string]any) bool {
		spec(m)["deletionStrategy"] = map[string]any{"onFailure": map[string]any{"policy": "DeleteNone"}}
		return true
	}},
	{"deletionStrategy: both legacy policies", "RayJob", func(m map[string]any) bool {
		spec(m)["deletionStrategy"] = map[string]any{"onSuccess": map[string]any{"policy": "DeleteCluster"}, "onFailure": map[string]any{"policy": "DeleteNone"}}
		return true
	}},
	{"deletionStrategy: empty", "RayJob", func(m map[string]any) bool {
		spec(m)["deletionStrategy"] = map[string]any{}
		return true
	}},
	{"date-time format", "", func(m map[string]any) bool {
		m["status"] = map[string]any{"startTime": "yesterday", "lastUpdateTime": "2026-01-02T03:04:05Z"}
		return true
	}},
	{"ComputeDomain numNodes", "ComputeDomain", func(m map[string]any) bool {
		spec(m)["numNodes"] = "four"
		delete(spec(m), "channel")
		return true
	}},
	{"null where the schema has a default", "", func(m map[string]any) bool {
		s := spec(m)
		if rc, ok := s["rayClusterSpec"].(map[string]any); ok {
			s = rc
		}
		if _, ok := s["headGroupSpec"]; !ok {
			return false
		}
		s["enableInTreeAutoscaling"] = nil
		return true
	}},
}

func TestMatchesTheAPIServersValidator(t *testing.T) {
	root := testenv.RepoRoot(t)
	upstream := map[string]*upstreamValidator{
		"RayJob":        newUpstream(t, filepath.Join(root, "fn/analyse/schema/crds/ray.io_rayjobs.yaml"), "v1"),
		"RayCluster":    newUpstream(t, filepath.Join(root, "fn/analyse/schema/crds/ray.io_rayclusters.yaml"), "v1"),
		"ComputeDomain": newUpstream(t, filepath.Join(root, "fn/analyse/schema/crds/resource.nvidia.com_computedomains.yaml"), "v1beta1"),
	}
	objects := map[string]int{}
	applied := map[string]int{}
	findings := map[string]int{}
	for _, file := range goldenOutputs(t) {
		rel, _ := filepath.Rel(root, file)
		for i, d := range readDocs(t, file) {
			up, ok := upstream[d.Kind]
			if !ok {
				continue
			}
			objects[d.Kind]++
			require.Equal(t, up.findings(d), ours(d), "%s document %d (%s/%s) as rendered", rel, i, d.Kind, d.Name)
			for _, b := range breakages {
				if b.kind != "" && b.kind != d.Kind {
					continue
				}
				e := d
				e.Data = deepCopy(d.Data).(map[string]any)
				if !b.edit(e.Data) {
					continue
				}
				applied[b.name]++
				want := up.findings(e)
				findings[b.name] += len(want)
				require.Equal(t, want, ours(e), "%s document %d (%s/%s) with %s", rel, i, d.Kind, d.Name, b.name)
			}
		}
	}
	for _, k := range []string{"RayJob", "RayCluster", "ComputeDomain"} {
		require.NotZero(t, objects[k], "no golden %s", k)
	}
	for _, b := range breakages {
		require.NotZero(t, applied[b.name], "breakage %q applied to no golden object", b.name)
		if !strings.Contains(b.name, "accepted") && !strings.Contains(b.name, "both legacy") && !strings.Contains(b.name, "null") {
			require.NotZero(t, findings[b.name], "breakage %q provoked no finding upstream: the comparison proves nothing for it", b.name)
		}
	}
	t.Logf("compared %v objects; breakages applied %v", objects, applied)
}
