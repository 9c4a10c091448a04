package chartgen_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

// hostileValues hold what would end a JSON string, a YAML scalar or a
// shell word, or start a template: each must reach the output as data.
var hostileValues = []string{
	`img:1", "securityContext": {"privileged": true}, "x": "`,
	"img:1\"\nprivileged: true\n",
	"img:1\n---\napiVersion: v1\nkind: Pod",
	`img:{{ .Release.Name }}`,
	"img:1\\\"",
}

// hostileOverrides would run a command in the entrypoint if quoted with
// single quotes alone.
var hostileOverrides = []string{
	`x.y=a'; touch /tmp/pwned; echo '`,
	"x.y=$(touch /tmp/pwned)",
	"x.y=`id`",
	`x.y="a b"; rm -rf /`,
	"x.y=a\nb",
}

// With the schema skipped (helm template --skip-schema-validation), under
// Helm 3 and Helm 4, a hostile value is data: the rendered objects are the
// benign render's with the value in place of the benign one, and an
// override is one word of the entrypoint.
func TestChartQuotesValuesAsData(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	const profile = "gb300-qwen3-30b-math-4n-4gpu"
	template := func(t *testing.T, bin string, vals map[string]any) string {
		t.Helper()
		f := filepath.Join(t.TempDir(), "values.yaml")
		b, err := yaml.Marshal(vals)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, b, 0o600))
		out, errOut, err := helmCmd(t, bin, "template", "r1", chartDir, "--kube-version", "1.34.0", "-n", "ml",
			"--skip-schema-validation", "-f", f)
		require.NoError(t, err, "%s", errOut)
		return out
	}
	decode := func(t *testing.T, stream string) []any {
		t.Helper()
		var objs []any
		for _, doc := range strings.Split(stream, "\n---\n") {
			var o map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(stripSource(doc)), &o))
			if o != nil {
				objs = append(objs, o)
			}
		}
		return objs
	}
	canon := func(t *testing.T, v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	for env, bin := range clis {
		t.Run(env, func(t *testing.T) {
			base := map[string]any{"profile": profile, "user": "alice", "image": "img:benign"}
			benign := canon(t, decode(t, template(t, bin, base)))
			for _, img := range hostileValues {
				vals := map[string]any{"profile": profile, "user": "alice", "image": img}
				objs := decode(t, template(t, bin, vals))
				got := canon(t, objs)
				quoted, err := json.Marshal(img)
				require.NoError(t, err)
				require.Contains(t, got, string(quoted), "the value is in the output as data")
				require.Equal(t, benign, strings.ReplaceAll(got, string(quoted), `"img:benign"`),
					"%q: the same objects as the benign render, the value in place of the benign one", img)
			}
			for _, o := range hostileOverrides {
				vals := map[string]any{"profile": profile, "user": "alice", "overrides": []string{o}}
				objs := decode(t, template(t, bin, vals))
				var entrypoint string
				for _, obj := range objs {
					m := obj.(map[string]any)
					if m["kind"] == "RayJob" {
						entrypoint, _ = m["spec"].(map[string]any)["entrypoint"].(string)
					}
				}
				require.Contains(t, entrypoint, shell.Quote(o), "%q: quoted as shell.Quote does", o)
				words, _ := shell.Tokenize(entrypoint, 0, len(entrypoint))
				var found bool
				for _, w := range words {
					found = found || (w.Text == o && !w.Op)
				}
				require.True(t, found, "%q: one word of the entrypoint", o)
			}
		})
	}
}
