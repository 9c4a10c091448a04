package emit

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// sameAsSigsYAML holds Marshal to its contract: the bytes of
// sigs.k8s.io/yaml.Marshal (Helm's toYaml) for the same data.
func sameAsSigsYAML(t *testing.T, data map[string]any) {
	t.Helper()
	want, wantErr := yaml.Marshal(data)
	got, err := Marshal(Doc{Data: data})
	if wantErr != nil {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func TestMarshalMatchesSigsYAML(t *testing.T) {
	numbers := []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 3.0, 1e20, 1e21, 1e-6, 1e-7, 123456789.125,
		1 << 53, 1<<53 + 1, 1 << 62, 1 << 63, 1 << 64, -(1 << 63), 0.1 + 0.2, math.MaxFloat64, math.SmallestNonzeroFloat64}
	strs := []string{"", "true", "True", "yes", "Yes", "on", "off", "y", "n", "No", "null", "~", "0x10", "0o17", "017",
		"1_000", "1e3", ".5", "+1", "-", "2001-12-14", "2001-12-14T21:59:43.10-05:00", "1:20", "a: b", "- x", "#x",
		"x #y", " lead", "trail ", "multi\nline", "multi\nline\n", "\n\nblank first", "\ttab", "🙂 ünïcode", "\u2028",
		"<&>", `"quoted"`, "'single'", "back\\slash", "%percent", "@at", "`tick", "*star", "&amp", "!bang", "|pipe", ">gt",
		"{flow}", "[list]", "key: value\n  indented: more", strings.Repeat("word ", 40), strings.Repeat("x", 200),
		"ends with colon:", "=", "<<", "\x00nul", "\x7f", "a\rb", " ", "\u00a0nbsp"}
	data := map[string]any{}
	for i, n := range numbers {
		data["n"+string(rune('a'+i))] = n
	}
	var list []any
	for _, s := range strs {
		list = append(list, s, map[string]any{s: s})
	}
	data["strings"] = list
	data["keys"] = map[string]any{"a10": 1.0, "a2": 2.0, "A1": true, "_x": nil, "b": []any{}, "c": map[string]any{},
		"10": "ten", "9": "nine", "x.y/z": "dots", "": "empty key"}
	data["nested"] = []any{[]any{1.0, []any{map[string]any{"deep": []any{nil, false}}}}}
	sameAsSigsYAML(t, data)
	for _, s := range strs { // each alone too: a scalar's style can depend on its neighbours' indentation
		sameAsSigsYAML(t, map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"args": []any{s}}}}})
	}
}

// Values a JSON decode never produces take the round trip, unchanged.
func TestMarshalOutsideTheShortcut(t *testing.T) {
	sameAsSigsYAML(t, map[string]any{"int": 3, "bad": "\xff\xfe", "s": []string{"typed"}})
	sameAsSigsYAML(t, map[string]any{"\xffkey": "v"})
	_, err := Marshal(Doc{Data: map[string]any{"nan": math.NaN()}})
	require.Error(t, err, "NaN has no JSON form; sigs.k8s.io/yaml refuses it too")
}
