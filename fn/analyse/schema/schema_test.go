package schema

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

func computeDomain(spec map[string]any) rendered.Doc {
	return rendered.Doc{Kind: "ComputeDomain", Name: "cd", Data: map[string]any{
		"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
		"metadata": map[string]any{"name": "cd", "namespace": "ns"}, "spec": spec}}
}

func deployment(selector, labels map[string]any) rendered.Doc {
	return rendered.Doc{Kind: "Deployment", Name: "d", Data: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": selector},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}}}}
}

// One case per kind of finding; the field is what a reviewer reads.
func TestValidate(t *testing.T) {
	channel := map[string]any{"resourceClaimTemplate": map[string]any{"name": "cd"}}
	for _, tc := range []struct {
		name  string
		doc   rendered.Doc
		field string // "" for a valid document
		msg   string
	}{
		{"valid ComputeDomain", computeDomain(map[string]any{"numNodes": 0.0, "channel": channel}), "", ""},
		{"unknown field, found by structural pruning", computeDomain(map[string]any{"numNodes": 0.0, "channel": channel, "nodes": 4.0}),
			"output ComputeDomain/cd.spec.nodes", "unknown field"},
		{"wrong type", computeDomain(map[string]any{"numNodes": "four", "channel": channel}),
			"output ComputeDomain/cd.spec.numNodes", "must be of type integer"},
		{"Deployment whose selector misses its template", deployment(map[string]any{"app": "a"}, map[string]any{"app": "b"}),
			"output Deployment/d.spec.template.metadata.labels", "do not match spec.selector"},
		{"a kind nrl-k8s never renders", rendered.Doc{Kind: "Job", Name: "j", Data: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}},
			"output Job/j", "no schema for batch/v1 Job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Validate("p.yaml", []rendered.Doc{tc.doc})
			if tc.field == "" {
				require.Empty(t, ds)
				return
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Field+": "+d.Message)
				if d.Field == tc.field && strings.Contains(d.Message, tc.msg) {
					return
				}
			}
			t.Fatalf("want %s: ...%s...; got %q", tc.field, tc.msg, got)
		})
	}
}
