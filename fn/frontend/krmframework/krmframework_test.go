package krmframework_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
)

// krm.Results restate kyaml's framework.Results: the same YAML in a
// ResourceList, the same text on stderr and as an error, the same exit code.
func TestResultsAreKyamls(t *testing.T) {
	ref := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "nemo-rl.nvidia.com/v1alpha1", Kind: "NemoRLRun"},
		NameMeta: yaml.NameMeta{Name: "run", Namespace: "ns"}}
	for _, tc := range []struct {
		name string
		rs   krm.Results
		exit int
	}{
		{"none", nil, 0},
		{"every field", krm.Results{{Message: "m: 'q'\nx", Severity: krm.SeverityError, ResourceRef: ref,
			Field: &krm.Field{Path: "spec.recipe", CurrentValue: 1, ProposedValue: "two"},
			File:  &krm.File{Path: "a/b.yaml", Index: 2}, Tags: map[string]string{"k": "v"}}}, 1},
		{"a warning and an info without severity", krm.Results{
			{Message: "w", Severity: krm.SeverityWarning, ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "n"}}},
			{Message: "i", Field: &krm.Field{Path: "f"}}}, 0},
		{"an empty reference", krm.Results{{Message: "e", Severity: krm.SeverityError, ResourceRef: &yaml.ResourceIdentifier{}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := krmframework.Results(tc.rs)
			require.Len(t, fw, len(tc.rs))
			got, err := yaml.Marshal(tc.rs)
			require.NoError(t, err)
			want, err := yaml.Marshal(fw)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			require.Equal(t, fw.Error(), tc.rs.Error())
			require.Equal(t, tc.exit, tc.rs.ExitCode())
			require.Equal(t, fw.ExitCode(), tc.rs.ExitCode())
			for i := range tc.rs {
				require.Equal(t, fw[i].String(), tc.rs[i].String())
			}
		})
	}
}

func TestProcessNil(t *testing.T) {
	require.EqualError(t, krmframework.Process(nil), "nil ResourceList")
	var _ framework.ResourceListProcessor = krmframework.Processor{}
}
