package krm

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The function's results, as kyaml's fn/framework writes them (Result,
// Results, Severity, Field, File: the same fields, YAML keys and text).
// They are restated here because importing kyaml's framework package links
// kube-openapi's validator and its formats, whose package initialisation
// every start of the function would pay (docs/performance.md, "The function alone: nrl-krm").
// fn/frontend/krmframework converts them to kyaml's types, and its tests
// hold the encoding and the text equal to kyaml's.

// Severity is a result's severity.
type Severity string

// The severities; an error result makes the function exit 1.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Result is one finding, as a ResourceList's results carry it.
type Result struct {
	Message     string                   `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    Severity                 `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *yaml.ResourceIdentifier `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *Field                   `yaml:"field,omitempty" json:"field,omitempty"`
	File        *File                    `yaml:"file,omitempty" json:"file,omitempty"`
	Tags        map[string]string        `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// Field is the field of a resource a result names.
type Field struct {
	Path          string `yaml:"path,omitempty" json:"path,omitempty"`
	CurrentValue  any    `yaml:"currentValue,omitempty" json:"currentValue,omitempty"`
	ProposedValue any    `yaml:"proposedValue,omitempty" json:"proposedValue,omitempty"`
}

// File is the file a result names.
type File struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// String is the result as one line: "[severity] apiVersion/kind/namespace/name
// field: message", the parts that are set.
func (r Result) String() string {
	var b strings.Builder
	sev := r.Severity
	if sev == "" {
		sev = SeverityInfo
	}
	fmt.Fprintf(&b, "[%s]", sev)
	if id := r.ResourceRef; id != nil {
		var parts []string
		for _, p := range []string{id.APIVersion, id.Kind, id.Namespace, id.Name} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 {
			b.WriteString(" " + strings.Join(parts, "/"))
		}
	}
	if r.Field != nil {
		b.WriteString(" " + r.Field.Path)
	}
	b.WriteString(": " + r.Message)
	return b.String()
}

// Results are an invocation's findings; as an error, every one of them.
type Results []*Result

// Error is every result's line, a blank line between two.
func (rs Results) Error() string {
	msgs := make([]string, len(rs))
	for i, r := range rs {
		msgs[i] = r.String()
	}
	return strings.Join(msgs, "\n\n")
}

// ExitCode is 1 when a result is an error, else 0.
func (rs Results) ExitCode() int {
	for _, r := range rs {
		if r.Severity == SeverityError {
			return 1
		}
	}
	return 0
}
