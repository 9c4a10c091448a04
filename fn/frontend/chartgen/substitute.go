package chartgen

import (
	"encoding/json"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Substitute is the chart's algorithm (templates/_helpers.tpl
// "nemo-rl-run.docs") in Go: the generator uses it to prove, on probe
// values, that the engine's output is the sentinel output with strings
// replaced; the parity tests prove the template does the same.
func Substitute(data string, rm *RenderMeta, d KnobDefaults, v Values) string {
	if token := rm.OverridesToken; token != "" {
		if len(v.Overrides) == 0 {
			data = strings.Replace(data, token, "", 1)
		} else {
			q := make([]string, len(v.Overrides))
			for i, o := range v.Overrides {
				q[i] = shell.Quote(o)
			}
			data = strings.Replace(data, SentinelOverride, jsonText(strings.Join(q, " ")), 1)
		}
	}
	data = substitutePairs(data, sentinelLabel, "labels", v.Labels)
	data = substitutePairs(data, sentinelAnnotation, "annotations", v.Annotations)
	data = substituteKnobs(data, rm, d, v.Knobs)
	image := v.Image
	if image == "" {
		image = rm.Image
	}
	data = strings.ReplaceAll(data, SentinelImage, jsonText(image))
	data = strings.ReplaceAll(data, SentinelName, jsonText(v.Name))
	data = strings.ReplaceAll(data, SentinelNamespace, jsonText(v.Namespace))
	data = strings.ReplaceAll(data, SentinelRunID, jsonText(v.RunID))
	data = strings.ReplaceAll(data, SentinelUser, jsonText(v.User))
	if v.Recipe != "" {
		data = strings.ReplaceAll(data, SentinelRecipeHash, manifest.RecipeHash(v.Recipe))
		// Last, so that no other substitution reaches into the recipe text.
		data = strings.Replace(data, jsonString(SentinelRecipe), jsonString(v.Recipe), 1)
	}
	return data
}

// jsonText is s as the text of a JSON string: every sentinel sits inside
// one, so a quote or a newline in a value stays data (the chart's
// "nemo-rl-run.jsonText").
func jsonText(s string) string {
	q := jsonString(s)
	return q[1 : len(q)-1]
}

// jsonString is s as encoding/json (and Helm's toJson) writes it.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// substitutePairs puts the run's labels or annotations where the sentinel
// pair is: their pairs as JSON text (fromJson and toYaml sort them as the
// engine's maps are sorted), or, without any, nothing, removing a map the
// sentinel was alone in as the engine's pruning does. The chart refuses
// keys the rendered data already has (a duplicate key's winner would depend
// on its place in the text).
func substitutePairs(data, sentinel, field string, pairs map[string]string) string {
	if len(pairs) == 0 {
		data = strings.ReplaceAll(data, `"`+field+`":{`+sentinel+`},`, "")
		data = strings.ReplaceAll(data, `,"`+field+`":{`+sentinel+`}`, "")
		data = strings.ReplaceAll(data, ","+sentinel, "")
		return strings.ReplaceAll(data, sentinel+",", "")
	}
	text := make([]string, 0, len(pairs))
	for _, k := range tree.SortedKeys(pairs) {
		text = append(text, pairText(k, pairs[k]))
	}
	return strings.ReplaceAll(data, sentinel, strings.Join(text, ","))
}
