package preflight

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// fromData decodes a document's data, and a mismatch names the document.
func TestFromData(t *testing.T) {
	type into struct {
		Spec struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
	}
	for _, tc := range []struct {
		name string
		data map[string]any
		want int
		err  string
	}{
		{"decodes", map[string]any{"spec": map[string]any{"replicas": 3}}, 3, ""},
		{"no field", map[string]any{}, 0, ""},
		{"wrong type names the document", map[string]any{"spec": map[string]any{"replicas": "three"}}, 0, "RayJob a/q: json: cannot unmarshal"},
		{"data not JSON", map[string]any{"spec": make(chan int)}, 0, "json: unsupported type: chan int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got into
			err := fromData(rendered.Doc{Kind: "RayJob", Namespace: "a", Name: "q", Data: tc.data}, &got)
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
			require.Equal(t, tc.want, got.Spec.Replicas)
		})
	}
}
