package profile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// compiledSchema is the committed schema as an editor's validator sees it.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := SchemaJSON()
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(SchemaID, doc))
	s, err := c.Compile(SchemaID)
	require.NoError(t, err)
	return s
}

// instance is a YAML profile as the JSON an editor validates (anchors
// expanded, as yaml-language-server does).
func instance(t *testing.T, name string, data []byte) any {
	t.Helper()
	v, err := tree.Parse(name, data)
	require.NoError(t, err)
	return instanceOf(t, v)
}

// instanceOf is a parsed profile as the JSON instance the schema validates.
func instanceOf(t *testing.T, v any) any {
	t.Helper()
	j, err := json.Marshal(plain(v))
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	require.NoError(t, err)
	return inst
}

// Every profile the loader accepts that we ship or test with is valid
// against the schema (an editor must not flag a good profile), and the
// mistakes the loader refuses are flagged by the schema too.
func TestSchemaValidatesProfiles(t *testing.T) {
	s := compiledSchema(t)
	var files []string
	for _, pat := range []string{"../../../../profiles/*/*.infra.yaml", "../../../../tests/golden/*/*.infra.yaml"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 8)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, s.Validate(instance(t, f, data)))
		})
	}
	for _, tc := range []struct{ name, profile string }{
		{"unknown top-level key", "image: x\nserviceAcount: y\n"},
		{"unknown nested key", "image: x\nlaunch: {entrypont: y}\n"},
		{"enumeration is case-sensitive", "image: x\nscheduler: {kind: KAI}\n"},
		{"wrong type", "image: [x]\n"},
		{"unknown cluster role", "image: x\nkuberay: {trainer: {name: t}}\n"},
		{"not an integer", "image: x\nkuberay: {training: {name: t, segmentSize: true}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, s.Validate(instance(t, tc.name, []byte(tc.profile))))
		})
	}
	for _, tc := range []struct{ name, profile string }{
		{"wrapped in infra:", "infra:\n  image: x\n"},
		{"_shared anchors", "_shared: {a: &a x}\nimage: *a\n"},
		{"numeric string for an integer", "image: x\nkuberay: {training: {name: t, segmentSize: \"16\"}}\n"},
		{"nulls from an empty value", "image: x\nlabels:\nimagePullSecrets:\n"},
		{"defaults: one file", "defaults: cluster.infra.yaml\nimage: x\n"},
		{"defaults: a list", "defaults: [cluster.infra.yaml, ../site.infra.yaml]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, s.Validate(instance(t, tc.name, []byte(tc.profile))))
		})
	}
}

// TestSchemaAgreesWithLoaderOnTestProfiles holds the schema to the loader
// over every profile the tests use, the bad cases' included: a profile the
// loader accepts is one the schema accepts (an editor must not underline
// it), and one the schema rejects is one the loader refuses.
func TestSchemaAgreesWithLoaderOnTestProfiles(t *testing.T) {
	s := compiledSchema(t)
	files, err := filepath.Glob("../../../../tests/*/*/*.infra.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 100)
	accepted := 0
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			v, err := tree.Parse(f, data)
			if err != nil {
				return // not YAML: nothing for an editor's schema to judge
			}
			schemaErr := s.Validate(instanceOf(t, v))
			_, ds := Load(Input{Loader: recipe.NewLoader(source.Disk{}), File: filepath.ToSlash(f), User: "alice", RunName: "r"})
			if !ds.HasErrors() {
				accepted++
				require.NoError(t, schemaErr, "the loader accepts %s", f)
			}
			if schemaErr != nil {
				require.True(t, ds.HasErrors(), "the schema rejects %s (%v) but the loader accepts it", f, schemaErr)
			}
		})
	}
	require.Positive(t, accepted)
}
