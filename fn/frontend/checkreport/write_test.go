package checkreport_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
)

// check writes text or json, and refuses any other format before a render.
func TestWrite(t *testing.T) {
	require.EqualError(t, checkreport.Options{Format: "yaml"}.Check(), "-o yaml: expected text (the summary) or json (one object: findings, podSecurity, prerequisites)")
	res := render(t)
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags.Err())
	var text, js bytes.Buffer
	require.NoError(t, checkreport.Write(&text, res, checkreport.Options{Format: checkreport.Text}))
	require.Contains(t, text.String(), "pod reads:")
	require.NoError(t, checkreport.Write(&js, res, checkreport.Options{Format: checkreport.JSON}))
	var obj map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &obj), js.String())
	require.Contains(t, obj, "findings")

	// --strict adds the schema's findings to the result the exit code reads.
	for _, d := range res.Docs {
		if d.Kind == "RayJob" {
			d.Data["spec"].(map[string]any)["nrlNoSuchField"] = 1
		}
	}
	require.NoError(t, checkreport.Write(&bytes.Buffer{}, res, checkreport.Options{Format: checkreport.Text}))
	require.False(t, res.Diags.HasErrors(), "without --strict the schema is not read")
	require.NoError(t, checkreport.Write(&bytes.Buffer{}, res, checkreport.Options{Format: checkreport.Text, Strict: true}))
	require.True(t, res.Diags.HasErrors(), "--strict: %v", res.Diags)
}

// values prints the resolved profile and the recipe keys the checks read,
// with the chain they came from.
func TestValues(t *testing.T) {
	y, err := checkreport.Values(render(t))
	require.NoError(t, err)
	for _, want := range []string{"infra:\n", "recipe:\n", "defaultsChain:\n", "cluster.num_nodes: 4\n"} {
		require.Contains(t, string(y), want)
	}
}
