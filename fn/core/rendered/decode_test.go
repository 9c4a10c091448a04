package rendered

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	docs, err := Decode("m.yaml", []byte(`# Source: chart/templates/run.yaml
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns}
---
---
{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}]}
`))
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, "ConfigMap ns/a", docs[0].Describe())
	assert.Equal(t, "Service b", docs[1].Describe())

	_, err = Decode("m.yaml", []byte("apiVersion: v1\nmetadata: {name: a}\n"))
	assert.ErrorContains(t, err, "m.yaml: document 1: kind and metadata.name are required")
	_, err = Decode("m.yaml", []byte("a: [\n"))
	assert.ErrorContains(t, err, "m.yaml: document 1")
}
