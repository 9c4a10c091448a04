package chartgen_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
)

// TestSchemaRulesFromData: the schema's per-profile rules come from the
// chart data, render by render, including what no packaged profile has: a
// services render that runs more than one image (no image sentinel in it),
// a profile that cannot ship a recipe value, and a knob one run-id variant
// of a mode lacks while the other has it.
func TestSchemaRulesFromData(t *testing.T) {
	rm := func(file string, unavailable ...string) *chartgen.RenderMeta {
		u := map[string]string{}
		for _, k := range unavailable {
			u[k] = "why"
		}
		return &chartgen.RenderMeta{File: file, Unavailable: u}
	}
	all := chartgen.KnobNames
	idx := &chartgen.Index{Profiles: []chartgen.Entry{{Name: "p"}}}
	meta := &chartgen.Meta{Profiles: map[string]*chartgen.ProfileMeta{"p": {
		Modes:         []string{"rayjob", "services"},
		NoRecipeValue: "why",
		Renders: map[string]*chartgen.RenderMeta{
			"rayjob":       rm("files/rendered/p.rayjob.json"),
			"rayjob.runid": rm("files/rendered/p.rayjob.runid.json", chartgen.KnobTTL),
			"services":     rm("files/rendered/p.services.json", all...),
		},
	}}}
	files := map[string][]byte{
		"files/rendered/p.rayjob.json":       []byte(`[{"image":"` + chartgen.SentinelImage + `"}]`),
		"files/rendered/p.rayjob.runid.json": []byte(`[{"image":"` + chartgen.SentinelImage + `"}]`),
		"files/rendered/p.services.json":     []byte(`[{"image":"a"},{"image":"b"}]`),
	}
	schema, err := chartgen.Schema(idx, meta, files)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		vals map[string]any
		want string // "" accepted
	}{
		{"a run", map[string]any{"profile": "p", "ttlSecondsAfterFinished": 60}, ""},
		{"a mode the profile lacks", map[string]any{"profile": "p", "mode": "dev"}, "at '/mode': value must be one of 'rayjob', 'services'"},
		{"a recipe value", map[string]any{"profile": "p", "recipe": "a: 1\n"}, "at '/recipe': value must be ''"},
		{"services with an image", map[string]any{"profile": "p", "mode": "services", "image": "img:1"}, "at '/image': value must be ''"},
		{"services with a knob", map[string]any{"profile": "p", "mode": "services", "env": map[string]any{"A": "1"}}, "at '/env': maxProperties: got 1, want 0"},
		{"the variant without the knob", map[string]any{"profile": "p", "runId": "r1", "ttlSecondsAfterFinished": 60}, "at '/ttlSecondsAfterFinished': got number, want null"},
		{"the variant without it, unset", map[string]any{"profile": "p", "runId": "r1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := chartutil.ValidateAgainstSingleSchema(tc.vals, schema)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// A knob the generator has no unset schema for fails chart-data.
	meta.Profiles["p"].Renders["rayjob"].Unavailable["newKnob"] = "why"
	_, err = chartgen.Schema(idx, meta, files)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "knob newKnob: no schema says it unset")
}
