package krm

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A result's line names its severity (info when unset), the parts of its
// object that are set and its field; the results as an error are every
// line, and an error among them makes the exit code 1.
// fn/frontend/krmframework's tests hold the same text equal to kyaml's.
func TestResults(t *testing.T) {
	run := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "nemo-rl.nvidia.com/v1alpha1", Kind: "NemoRLRun"},
		NameMeta: yaml.NameMeta{Name: "run", Namespace: "ns"}}
	cases := []struct {
		name  string
		rs    Results
		lines string
		exit  int
	}{
		{"none", nil, "", 0},
		{"an error on a field of an object", Results{{Severity: SeverityError, ResourceRef: run, Field: &Field{Path: "spec.recipe"}, Message: "m"}},
			"[error] nemo-rl.nvidia.com/v1alpha1/NemoRLRun/ns/run spec.recipe: m", 1},
		{"only the parts of the object that are set", Results{{Severity: SeverityWarning, ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "n"}}, Message: "w"}},
			"[warning] n: w", 0},
		{"an empty object and no severity", Results{{ResourceRef: &yaml.ResourceIdentifier{}, Message: "i"}},
			"[info]: i", 0},
		{"a warning then an error, a blank line between", Results{{Severity: SeverityWarning, Message: "w"}, {Severity: SeverityError, Message: "e"}},
			"[warning]: w\n\n[error]: e", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.lines, tc.rs.Error())
			require.Equal(t, tc.exit, tc.rs.ExitCode())
		})
	}
}
