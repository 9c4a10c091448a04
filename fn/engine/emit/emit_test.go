package emit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// A stream is `---` then each document's YAML with sorted keys, block
// strings kept literal, and one newline at the end of each document.
func TestStream(t *testing.T) {
	out, err := Stream([]rendered.Doc{
		{Kind: "Service", Name: "s", Data: map[string]any{"kind": "Service", "apiVersion": "v1", "metadata": map[string]any{"name": "s"}}},
		{Kind: "RayJob", Name: "j", Data: map[string]any{"spec": map[string]any{"entrypoint": "set -eu\npython x.py\n", "replicas": 2.0}, "kind": "RayJob"}},
	})
	require.NoError(t, err)
	require.Equal(t, `---
apiVersion: v1
kind: Service
metadata:
  name: s
---
kind: RayJob
spec:
  entrypoint: |
    set -eu
    python x.py
  replicas: 2
`, string(out))
}

// ToDoc drops status and the encoder's empty-struct noise; Convert orders
// documents as Helm installs them.
func TestConvertPrunesAndOrders(t *testing.T) {
	type meta struct {
		Name string `json:"name"`
	}
	type obj struct {
		Kind     string         `json:"kind"`
		Metadata meta           `json:"metadata"`
		Status   map[string]any `json:"status"`
		Strategy map[string]any `json:"strategy"`
	}
	docs, err := Convert([]any{
		obj{Kind: "RayJob", Metadata: meta{"j"}, Status: map[string]any{"x": 1}},
		obj{Kind: "Service", Metadata: meta{"s"}, Strategy: map[string]any{}},
	})
	require.NoError(t, err)
	require.Equal(t, "Service", docs[0].Kind)
	require.Equal(t, "s", docs[0].Name)
	require.NotContains(t, docs[0].Data, "strategy")
	require.NotContains(t, docs[1].Data, "status")
}

// -o json is a v1 List of the documents, four-space indented, keys sorted,
// `<` and `&` kept as they are; rendered.Decode reads it back.
func TestList(t *testing.T) {
	out, err := List([]rendered.Doc{{Kind: "ConfigMap", Name: "c", Data: map[string]any{
		"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"x": "a<b&c"}}}})
	require.NoError(t, err)
	require.Equal(t, `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "data": {
                "x": "a<b&c"
            },
            "kind": "ConfigMap",
            "metadata": {
                "name": "c"
            }
        }
    ],
    "kind": "List"
}
`, string(out))
	back, err := rendered.Decode("l.json", out)
	require.NoError(t, err)
	require.Equal(t, "ConfigMap c", back[0].Describe())
}
