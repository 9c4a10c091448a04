package chartgen_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaRefusalsRealHelm: every refusal that is values.schema.json's
// (badValues and knobBadValues whose message is Helm's "at '/...'") fails
// under the pinned Helm 3 and Helm 4 CLIs with the same message: the
// value's path and what it expects. Helm validates the values before any
// template runs, so the chart's Chart.yaml, values and schema with one
// empty template say the same, without loading the rendered data per call
// (TestBadValues and TestKnobBadValues hold the whole chart to them).
func TestSchemaRefusalsRealHelm(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	cases := badValues()
	for _, k := range knobBadValues() {
		cases = append(cases, badValue{k.name, k.run.values(t), k.want})
	}
	dir := t.TempDir()
	schemaOnly := filepath.Join(dir, "chart")
	require.NoError(t, os.MkdirAll(filepath.Join(schemaOnly, "templates"), 0o755))
	for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json"} {
		b, err := os.ReadFile(filepath.Join(chartDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(schemaOnly, f), b, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(schemaOnly, "templates", "none.yaml"), nil, 0o600))
	n := 0
	for i, c := range cases {
		if !strings.HasPrefix(c.want, "at '/") {
			continue // the template's
		}
		n++
		// JSON is YAML: a values file keeps types as they are.
		b, err := json.Marshal(c.vals)
		require.NoError(t, err)
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		require.NoError(t, os.WriteFile(f, b, 0o600))
		cases[i].vals = map[string]any{"file": f}
	}
	require.Greater(t, n, 25, "the schema's refusals")
	for env, bin := range clis {
		t.Run(env, func(t *testing.T) {
			for _, c := range cases {
				if !strings.HasPrefix(c.want, "at '/") {
					continue
				}
				_, errOut, err := helmCmd(t, bin, "template", "my-run", schemaOnly, "--kube-version", "1.34.0", "-n", "default", "-f", c.vals["file"].(string))
				require.Error(t, err, c.name)
				assert.Contains(t, errOut, "values don't meet the specifications of the schema(s)", c.name)
				assert.Contains(t, errOut, c.want, c.name)
			}
		})
	}
}
