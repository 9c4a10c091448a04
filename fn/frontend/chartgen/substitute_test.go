package chartgen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
)

// Substitute puts each value where its sentinel is, as JSON text; the
// overrides shell-quoted where the sentinel override was (or its token
// removed); the labels and annotations as sorted pairs (or, without any,
// the sentinel pair and a map it was alone in removed); the recipe last.
func TestSubstitute(t *testing.T) {
	const token = " " + SentinelOverride
	cases := []struct {
		name string
		data string
		rm   RenderMeta
		v    Values
		want string
	}{
		{"every run parameter, as JSON text",
			`{"u":"u7z7-x","ns":"nrlsentinelns","id":"r7z7","n":"n7z7-head","i":"i7z7.invalid/nrl-image"}`, RenderMeta{},
			Values{User: "al", Namespace: "ml", RunID: "7", Name: `a"b`, Image: "img:1"},
			`{"u":"al-x","ns":"ml","id":"7","n":"a\"b-head","i":"img:1"}`},
		{"no image value: the profile's", `{"i":"i7z7.invalid/nrl-image"}`, RenderMeta{Image: "prof/img:2"}, Values{},
			`{"i":"prof/img:2"}`},
		{"no overrides: the sentinel's token removed", `{"c":"python run.py` + token + ` \u0026\u0026 x"}`, RenderMeta{OverridesToken: token}, Values{},
			`{"c":"python run.py \u0026\u0026 x"}`},
		{"overrides shell-quoted", `{"c":"python run.py` + token + `"}`, RenderMeta{OverridesToken: token},
			Values{Overrides: []string{"a=1", "b=[1, 2]", `c="q"`}},
			`{"c":"python run.py a=1 'b=[1, 2]' 'c=\"q\"'"}`},
		{"no entrypoint: the sentinel override stays", `{"c":"` + SentinelOverride + `"}`, RenderMeta{}, Values{Overrides: []string{"a=1"}},
			`{"c":"` + SentinelOverride + `"}`},
		{"labels and annotations sorted in the sentinel's place",
			`{"labels":{"app":"x",` + sentinelLabel + `},"annotations":{` + sentinelAnnotation + `}}`, RenderMeta{},
			Values{Labels: map[string]string{"z": "1", "a": "2"}, Annotations: map[string]string{"k": `"v"`}},
			`{"labels":{"app":"x","a":"2","z":"1"},"annotations":{"k":"\"v\""}}`},
		{"none: a map the sentinel was alone in goes, the pair goes from others",
			`{"labels":{` + sentinelLabel + `,"app":"x"},"annotations":{` + sentinelAnnotation + `},"x":{"b":1,` + sentinelLabel + `}}`, RenderMeta{}, Values{},
			`{"labels":{"app":"x"},"x":{"b":1}}`},
		{"a map alone at the end goes with its comma",
			`{"a":1,"annotations":{` + sentinelAnnotation + `}}`, RenderMeta{}, Values{}, `{"a":1}`},
		{"the recipe and its hash, the recipe's text left as it is",
			`{"name":"recipe-h9x9h9x9h9","data":{"r.yaml":"nrl-sentinel-recipe-y7z7"}}`, RenderMeta{},
			Values{User: "al", Recipe: "user: u7z7\nq: \"x\"\n"},
			`{"name":"recipe-` + manifest.RecipeHash("user: u7z7\nq: \"x\"\n") + `","data":{"r.yaml":"user: u7z7\nq: \"x\"\n"}}`},
		{"no recipe value: its sentinels stay", `{"r":"nrl-sentinel-recipe-y7z7","h":"h9x9h9x9h9"}`, RenderMeta{}, Values{},
			`{"r":"nrl-sentinel-recipe-y7z7","h":"h9x9h9x9h9"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Substitute(tc.data, &tc.rm, KnobDefaults{}, tc.v))
		})
	}
}
