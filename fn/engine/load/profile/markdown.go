package profile

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Markers around the generated part of docs/profiles.md.
const (
	MarkdownBegin = "<!-- BEGIN GENERATED: generated from fn/engine/load/profile by `make golden`; do not edit -->"
	MarkdownEnd   = "<!-- END GENERATED -->"
)

// Markdown is the key reference of docs/profiles.md: one row per key with
// its type, default, what it changes and an example.
func Markdown() (string, error) {
	keys, err := Keys()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| Key | Type | Default | What it does | Example |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, k := range keys {
		def := ""
		if k.HasDefault {
			def = "`" + inline(k.Default) + "`"
		}
		desc := k.Description
		if len(k.Enum) > 0 {
			desc += " One of: `" + strings.Join(k.Enum, "`, `") + "`."
		}
		ex := ""
		if k.Example != "" {
			ex = "`" + inline(exampleValue(k.Example)) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Path, k.Type, cell(def), cell(desc), cell(ex))
	}
	return b.String(), nil
}

// inline writes a value as one line of flow YAML-ish JSON.
func inline(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cell escapes what would break a Markdown table row.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// ReplaceMarkdown puts the generated reference between the markers of doc.
func ReplaceMarkdown(doc string) (string, error) {
	i := strings.Index(doc, MarkdownBegin)
	j := strings.Index(doc, MarkdownEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("the markers %q and %q are missing", MarkdownBegin, MarkdownEnd)
	}
	table, err := Markdown()
	if err != nil {
		return "", err
	}
	return doc[:i+len(MarkdownBegin)] + "\n\n" + table + "\n" + doc[j:], nil
}

// ReferenceFormats are the formats Reference writes.
var ReferenceFormats = []string{"json", "markdown"}

// Reference is the profile's reference in a format `nrl-k8s schema profile
// -o` names: json (the JSON Schema, SchemaJSON) or markdown (the key
// reference, Markdown).
func Reference(format string) ([]byte, error) {
	switch format {
	case "json":
		return SchemaJSON()
	case "markdown":
		s, err := Markdown()
		return []byte(s), err
	}
	return nil, fmt.Errorf("-o %s: expected json or markdown", format)
}
