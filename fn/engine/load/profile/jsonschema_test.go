package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
)

const (
	schemaFile = "../../../../profiles/profile.schema.json"
	docsFile   = "../../../../docs/profiles.md"
)

// The committed schema and the generated part of docs/profiles.md are the
// generator's output (`make golden` rewrites both).
func TestGoldenProfileSchema(t *testing.T) {
	got, err := SchemaJSON()
	require.NoError(t, err)
	golden.File(t, schemaFile, got)
}

func TestGoldenProfileDocs(t *testing.T) {
	doc, err := os.ReadFile(docsFile)
	require.NoError(t, err)
	got, err := ReplaceMarkdown(string(doc))
	require.NoError(t, err)
	golden.File(t, docsFile, []byte(got))
}

// Every enumeration names a key of the schema.
func TestEnumsNameKeys(t *testing.T) {
	keys, err := Keys()
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k.Path] = true
	}
	for p := range enums {
		require.True(t, seen[p], "enums names %s, which is not a key", p)
	}
}

// The schema's defaults are defaults.yaml's values, and every example is
// a value its key accepts: render a profile made of the examples' scalar
// types through the loader's decoder.
func TestSchemaDefaultsAndShape(t *testing.T) {
	b, err := SchemaJSON()
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	props := s["properties"].(map[string]any)
	for _, tc := range []struct {
		path []string
		want any
	}{
		{[]string{"scheduler", "kind"}, "default"},
		{[]string{"workspace", "kind"}, "rayUpload"},
		{[]string{"launch", "rayjob", "ttlSecondsAfterFinished"}, float64(3600)},
		{[]string{"dra", "roce", "deviceClassName"}, "roce.networking.k8s.aws"},
	} {
		t.Run(strings.Join(tc.path, "."), func(t *testing.T) {
			node := map[string]any{"properties": props}
			for _, p := range tc.path {
				node = node["properties"].(map[string]any)[p].(map[string]any)
			}
			require.Equal(t, tc.want, node["default"])
		})
	}
	require.Equal(t, false, s["additionalProperties"], "unknown top-level keys are refused, as the loader does")
	training := props["kuberay"].(map[string]any)["properties"].(map[string]any)["training"].(map[string]any)
	require.Contains(t, training["properties"], "segmentSize")
}

// Each shipped profile points editors at the committed schema.
func TestShippedProfilesNameSchema(t *testing.T) {
	files, err := filepath.Glob("../../../../profiles/*/*.infra.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(data), "# yaml-language-server: $schema=../profile.schema.json\n"), "%s: first line must be the yaml-language-server schema comment", f)
	}
}
