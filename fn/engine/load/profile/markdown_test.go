package profile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMarkdown: one row per key: its type, its default and example
// inline (JSON beyond a string), its enumeration after what it does, and
// what would break a table row escaped.
func TestMarkdown(t *testing.T) {
	md, err := Markdown()
	require.NoError(t, err)
	keys, err := Keys()
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	require.Len(t, rows, len(keys)+2, "a header, a rule and one row per key")
	for key, want := range map[string]string{
		"scheduler.kind":       "| `scheduler.kind` | string | `default` | kai, kueue or default (case-sensitive); see scheduler. A pod naming another scheduler is an error under kai. One of: `kai`, `kueue`, `default`. | `kai` |",
		"imagePullSecrets":     "| `imagePullSecrets` | list of strings | `[]` | When non-empty, replaces the pull secrets of every rendered pod (RayCluster, Deployment, dev pod). | `[\"ngc-pull\"]` |",
		"dra.infiniband.count": "| `dra.infiniband.count` | integer or null |  | InfiniBand devices per worker pod (1 or more); required by an infiniband-channel claim. | `8` |",
	} {
		assert.Contains(t, rows, want, key)
	}
	for _, tc := range []struct{ in, want string }{{"a|b\nc", `a\|b c`}, {"plain", "plain"}} {
		assert.Equal(t, tc.want, cell(tc.in))
	}
}

func TestReplaceMarkdown(t *testing.T) {
	table, err := Markdown()
	require.NoError(t, err)
	for _, tc := range []struct{ name, doc, want, err string }{
		{"between the markers", "intro\n" + MarkdownBegin + "\nold\n" + MarkdownEnd + "\nrest\n",
			"intro\n" + MarkdownBegin + "\n\n" + table + "\n" + MarkdownEnd + "\nrest\n", ""},
		{"no end", MarkdownBegin + "\n", "", "are missing"},
		{"end before begin", MarkdownEnd + MarkdownBegin, "", "are missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplaceMarkdown(tc.doc)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// `nrl-k8s schema profile -o FORMAT` prints one of the two generated
// references, and names the formats it knows otherwise.
func TestReference(t *testing.T) {
	js, err := SchemaJSON()
	require.NoError(t, err)
	md, err := Markdown()
	require.NoError(t, err)
	for format, want := range map[string]string{"json": string(js), "markdown": md} {
		got, err := Reference(format)
		require.NoError(t, err)
		require.Equal(t, want, string(got), format)
	}
	_, err = Reference("yaml")
	require.EqualError(t, err, "-o yaml: expected json or markdown")
}
