// Package schema_test validates every golden output against the OpenAPI
// schema of its kind (the embedded KubeRay and ComputeDomain CRDs, the
// k8s.io/api types for built-in kinds), offline.
package schema_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func readDocs(t *testing.T, file string) []rendered.Doc {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []rendered.Doc
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, file)
		if m == nil {
			continue
		}
		d := rendered.Doc{Data: m}
		d.Kind, _ = m["kind"].(string)
		if md, ok := m["metadata"].(map[string]any); ok {
			d.Name, _ = md["name"].(string)
		}
		docs = append(docs, d)
	}
	return docs
}

func goldenOutputs(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "tests", "golden", "*", "expected", "*.yaml"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10, "expected the golden outputs under tests/golden")
	return files
}

// Every object of every golden output satisfies its kind's schema.
func TestGoldenOutputsMatchTheirSchemas(t *testing.T) {
	kinds := map[string]int{}
	for _, file := range goldenOutputs(t) {
		rel, _ := filepath.Rel(testenv.RepoRoot(t), file)
		t.Run(rel, func(t *testing.T) {
			docs := readDocs(t, file)
			require.NotEmpty(t, docs)
			for _, d := range docs {
				kinds[d.Kind]++
			}
			require.Empty(t, schema.Validate(rel, docs).Errors())
		})
	}
	// The goldens cover every kind we render, so each schema is exercised.
	for _, k := range []string{"RayJob", "RayCluster", "ComputeDomain", "ResourceClaimTemplate", "Deployment", "Service", "Pod"} {
		require.NotZero(t, kinds[k], "no golden output holds a %s", k)
	}
}

// The validator fails on what the API server would reject: one broken
// copy of a real object per rule.
func TestSchemaViolations(t *testing.T) {
	byKind := map[string]rendered.Doc{}
	for _, file := range goldenOutputs(t) {
		for _, d := range readDocs(t, file) {
			if _, ok := byKind[d.Kind]; !ok {
				byKind[d.Kind] = d
			}
		}
	}
	cases := []struct {
		name, kind string
		edit       func(m map[string]any)
		field, msg string
	}{
		{"enum", "RayJob", func(m map[string]any) {
			spec(m)["deletionStrategy"] = map[string]any{"onSuccess": map[string]any{"policy": "DeleteEverything"}}
		}, "spec.deletionStrategy.onSuccess.policy", `Unsupported value: "DeleteEverything": supported values: "DeleteCluster"`},
		{"CEL rule", "RayJob", func(m map[string]any) {
			spec(m)["deletionStrategy"] = map[string]any{"onSuccess": map[string]any{"policy": "DeleteCluster"}}
		}, "spec.deletionStrategy", "deletionStrategy requires either BOTH onSuccess and onFailure"},
		{"unknown field in a CRD", "RayJob", func(m map[string]any) { spec(m)["entryPoint"] = "python x.py" },
			"spec.entryPoint", "unknown field; not in the CRD schema"},
		{"wrong type", "RayCluster", func(m map[string]any) { spec(m)["enableInTreeAutoscaling"] = "yes" },
			"spec.enableInTreeAutoscaling", "must be of type boolean"},
		{"required field", "RayCluster", func(m map[string]any) { delete(spec(m), "headGroupSpec") },
			"spec.headGroupSpec", "Required value"},
		{"int-or-string", "RayCluster", func(m map[string]any) {
			c := spec(m)["headGroupSpec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": []any{"1"}}}
		}, "spec.headGroupSpec.template.spec.containers[0].resources.limits.cpu", "must be of type integer,string"},
		{"ComputeDomain unknown field", "ComputeDomain", func(m map[string]any) { spec(m)["nodes"] = int64(4) },
			"spec.nodes", "unknown field"},
		{"Deployment selector", "Deployment", func(m map[string]any) {
			spec(m)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "other"}}
		}, "spec.template.metadata.labels", "do not match spec.selector"},
		{"container without image", "Pod", func(m map[string]any) {
			delete(spec(m)["containers"].([]any)[0].(map[string]any), "image")
		}, "spec.containers[0].image", "is required"},
		{"unknown field in a built-in kind", "Service", func(m map[string]any) { spec(m)["port"] = int64(80) },
			"", `unknown field "spec.port"`},
		{"claim request without class", "ResourceClaimTemplate", func(m map[string]any) {
			r := spec(m)["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)[0].(map[string]any)
			delete(r["exactly"].(map[string]any), "deviceClassName")
		}, "spec.spec.devices.requests[0].exactly.deviceClassName", "is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := byKind[tc.kind]
			require.True(t, ok, "no golden %s", tc.kind)
			d.Data = deepCopy(d.Data).(map[string]any)
			require.Empty(t, schema.Validate("p.yaml", []rendered.Doc{d}), "the unedited object is valid")
			tc.edit(d.Data)
			ds := schema.Validate("p.yaml", []rendered.Doc{d})
			require.NotEmpty(t, ds)
			want := "output " + d.Kind + "/" + d.Name
			if tc.field != "" {
				want += "." + tc.field
			}
			var got []string
			for _, x := range ds {
				got = append(got, x.Field+": "+x.Message)
				if x.File == "p.yaml" && x.Field == want && strings.Contains(x.Message, tc.msg) {
					return
				}
			}
			t.Fatalf("expected %s: ...%s...; got %q", want, tc.msg, got)
		})
	}
}

// An unknown kind is an error, not a silent pass.
func TestUnknownKindHasNoSchema(t *testing.T) {
	ds := schema.Validate("p.yaml", []rendered.Doc{{Kind: "Job", Name: "j", Data: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}}})
	require.Len(t, ds, 1)
	require.Contains(t, ds[0].Message, "no schema for batch/v1 Job")
}

func spec(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
