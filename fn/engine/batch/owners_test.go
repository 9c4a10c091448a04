package batch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

func TestOwners(t *testing.T) {
	doc := func(ns, name, image string) rendered.Doc {
		return rendered.Doc{Kind: "Deployment", Name: name, Namespace: ns, Data: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"image": image}}}
	}
	for _, tc := range []struct {
		name   string
		second rendered.Doc
		want   string
	}{
		{"same object, different content", doc("a", "tools", "img:2"), "Deployment a/tools is also rendered by run first, differently; expected runs first and second"},
		{"same object, same content (a shared service)", doc("a", "tools", "img:1"), ""},
		{"another namespace", doc("b", "tools", "img:2"), ""},
		{"another name", doc("a", "other", "img:2"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := owners{}
			require.Empty(t, o.claim("first", rendered.Identities([]rendered.Doc{doc("a", "tools", "img:1")})))
			msgs := o.claim("second", rendered.Identities([]rendered.Doc{tc.second}))
			if tc.want == "" {
				require.Empty(t, msgs)
				return
			}
			require.Len(t, msgs, 1)
			require.Contains(t, msgs[0], tc.want)
		})
	}
}
