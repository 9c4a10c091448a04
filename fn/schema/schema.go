// Package schema validates rendered objects against the API they are meant
// for, offline: custom resources (RayJob, RayCluster, ComputeDomain) against
// the OpenAPI v3 schema of their embedded CRD, built-in kinds against the
// k8s.io/api types plus the fields the API server requires. It backs
// `nrl-k8s check --strict` and the output tests; a normal render never
// touches it, and the CRDs are parsed on first use only.
package schema

import (
	"embed"
	"fmt"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tree"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/emit"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// Node is the subset of OpenAPI v3 (structural schema) that CRDs use and
// that can be checked without an API server. CEL rules
// (x-kubernetes-validations) are not evaluated.
type Node struct {
	Type                 string           `yaml:"type"`
	Format               string           `yaml:"format"`
	Properties           map[string]*Node `yaml:"properties"`
	AdditionalProperties *Additional      `yaml:"additionalProperties"`
	Items                *Node            `yaml:"items"`
	Required             []string         `yaml:"required"`
	Enum                 []any            `yaml:"enum"`
	AnyOf                []*Node          `yaml:"anyOf"`
	Pattern              string           `yaml:"pattern"`
	MaxLength            *int64           `yaml:"maxLength"`
	MinLength            *int64           `yaml:"minLength"`
	Minimum              *float64         `yaml:"minimum"`
	Maximum              *float64         `yaml:"maximum"`
	MaxItems             *int64           `yaml:"maxItems"`
	MinItems             *int64           `yaml:"minItems"`
	Nullable             bool             `yaml:"nullable"`
	Default              any              `yaml:"default"`
	PreserveUnknown      bool             `yaml:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool             `yaml:"x-kubernetes-int-or-string"`
	EmbeddedResource     bool             `yaml:"x-kubernetes-embedded-resource"`

	re     *regexp.Regexp
	reOnce sync.Once
}

// Additional is additionalProperties: a schema, or false/true.
type Additional struct {
	Allowed bool
	Schema  *Node
}

// UnmarshalYAML reads a bool or a schema.
func (a *Additional) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&a.Allowed)
	}
	a.Allowed = true
	a.Schema = &Node{}
	return n.Decode(a.Schema)
}

type crd struct {
	Spec struct {
		Group string `yaml:"group"`
		Names struct {
			Kind string `yaml:"kind"`
		} `yaml:"names"`
		Versions []struct {
			Name   string `yaml:"name"`
			Schema struct {
				OpenAPIV3Schema *Node `yaml:"openAPIV3Schema"`
			} `yaml:"schema"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

// crdFor maps apiVersion/kind to the file holding its CRD.
var crdFor = map[string]string{
	"ray.io/v1/RayJob":                          "crds/ray.io_rayjobs.yaml",
	"ray.io/v1/RayCluster":                      "crds/ray.io_rayclusters.yaml",
	"resource.nvidia.com/v1beta1/ComputeDomain": "crds/resource.nvidia.com_computedomains.yaml",
}

type loaded struct {
	once sync.Once
	root *Node
	err  error
}

var cache = map[string]*loaded{}

func init() {
	for _, f := range crdFor {
		cache[f] = &loaded{}
	}
}

// CRDSchema returns the openAPIV3Schema for apiVersion/kind, parsing its
// CRD on first use; ok is false for kinds without an embedded CRD.
func CRDSchema(apiVersion, kind string) (root *Node, ok bool, err error) {
	file, ok := crdFor[apiVersion+"/"+kind]
	if !ok {
		return nil, false, nil
	}
	l := cache[file]
	l.once.Do(func() { l.root, l.err = parseCRD(file, apiVersion, kind) })
	return l.root, true, l.err
}

func parseCRD(file, apiVersion, kind string) (*Node, error) {
	data, err := crdFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c crd
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	_, version, _ := strings.Cut(apiVersion, "/")
	for _, v := range c.Spec.Versions {
		if v.Name == version && v.Schema.OpenAPIV3Schema != nil {
			return v.Schema.OpenAPIV3Schema, nil
		}
	}
	return nil, fmt.Errorf("%s: no version %s of %s", file, version, kind)
}

// Violation is one place where a document breaks its schema.
type Violation struct {
	Path string // JSON path inside the document, e.g. spec.entrypoint
	Msg  string
}

// Check validates one document against a schema node.
func Check(n *Node, v any) []Violation {
	var out []Violation
	walk(n, v, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func join(p, k string) string {
	if k == "" {
		return p
	}
	if p == "" {
		return k
	}
	return p + "." + k
}

func walk(n *Node, v any, p string, out *[]Violation) {
	fail := func(format string, args ...any) {
		*out = append(*out, Violation{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if v == nil {
		if !n.Nullable {
			fail("found null; expected a %s", typeName(n))
		}
		return
	}
	if len(n.AnyOf) > 0 && !n.IntOrString {
		ok := false
		for _, alt := range n.AnyOf {
			var sub []Violation
			walk(alt, v, p, &sub)
			ok = ok || len(sub) == 0
		}
		if !ok {
			fail("matches none of the allowed forms")
			return
		}
	}
	if n.IntOrString {
		switch v.(type) {
		case string, int64, float64, int:
		default:
			fail("found %s; expected an integer or a string", tree.Article(kindOf(v)))
		}
		return
	}
	switch n.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("found %s; expected an object", tree.Article(kindOf(v)))
			return
		}
		for _, r := range n.Required {
			// The API server fills a defaulted field before it validates.
			if prop, ok := n.Properties[r]; ok && prop.Default != nil {
				continue
			}
			if _, ok := m[r]; !ok {
				*out = append(*out, Violation{Path: join(p, r), Msg: "is required"})
			}
		}
		for _, k := range tree.SortedKeys(m) {
			child, ok := n.Properties[k]
			switch {
			case ok:
				walk(child, m[k], join(p, k), out)
			case n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil:
				walk(n.AdditionalProperties.Schema, m[k], join(p, k), out)
			case n.AdditionalProperties != nil && n.AdditionalProperties.Allowed, n.PreserveUnknown:
			case n.EmbeddedResource && (k == "apiVersion" || k == "kind" || k == "metadata"):
			case len(n.Properties) == 0 && n.AdditionalProperties == nil:
				// `type: object` with no properties (metadata in a CRD): the
				// API server prunes nothing it does not know of here.
			default:
				*out = append(*out, Violation{Path: join(p, k), Msg: "unknown field; not in the CRD schema (the API server would drop it)"})
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			fail("found %s; expected an array", tree.Article(kindOf(v)))
			return
		}
		if n.MinItems != nil && int64(len(l)) < *n.MinItems {
			fail("has %d items; expected at least %d", len(l), *n.MinItems)
		}
		if n.MaxItems != nil && int64(len(l)) > *n.MaxItems {
			fail("has %d items; expected at most %d", len(l), *n.MaxItems)
		}
		if n.Items != nil {
			for i, e := range l {
				walk(n.Items, e, fmt.Sprintf("%s[%d]", p, i), out)
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			fail("found %s; expected a string", tree.Article(kindOf(v)))
			return
		}
		if n.MaxLength != nil && int64(len([]rune(s))) > *n.MaxLength {
			fail("%q is %d characters; expected at most %d", s, len([]rune(s)), *n.MaxLength)
		}
		if n.MinLength != nil && int64(len([]rune(s))) < *n.MinLength {
			fail("%q is %d characters; expected at least %d", s, len([]rune(s)), *n.MinLength)
		}
		if re := n.regexp(); re != nil && !re.MatchString(s) {
			fail("%q does not match the pattern %s", s, n.Pattern)
		}
	case "integer":
		f, ok := number(v)
		if !ok || f != math.Trunc(f) {
			fail("found %v; expected an integer", v)
			return
		}
		n.bounds(f, fail)
	case "number":
		f, ok := number(v)
		if !ok {
			fail("found %s; expected a number", tree.Article(kindOf(v)))
			return
		}
		n.bounds(f, fail)
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("found %s; expected a boolean", tree.Article(kindOf(v)))
			return
		}
	}
	if len(n.Enum) > 0 {
		for _, e := range n.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return
			}
		}
		fail("found %v; expected one of %v", v, n.Enum)
	}
}

func (n *Node) bounds(f float64, fail func(string, ...any)) {
	if n.Minimum != nil && f < *n.Minimum {
		fail("found %v; expected at least %v", f, *n.Minimum)
	}
	if n.Maximum != nil && f > *n.Maximum {
		fail("found %v; expected at most %v", f, *n.Maximum)
	}
}

// regexp compiles the pattern once; an ECMA pattern Go cannot read is
// skipped rather than reported as the document's fault.
func (n *Node) regexp() *regexp.Regexp {
	if n.Pattern == "" {
		return nil
	}
	n.reOnce.Do(func() { n.re, _ = regexp.Compile(n.Pattern) })
	return n.re
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	}
	return 0, false
}

func typeName(n *Node) string {
	if n.Type == "" {
		return "value"
	}
	return n.Type
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int64, int:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// Validate checks every document: custom resources against their CRD,
// built-in kinds against k8s.io/api. Findings are errors located at file
// (the profile) and "output Kind/name.<path>".
func Validate(file string, docs []emit.Doc) diag.List {
	var ds diag.List
	for _, d := range docs {
		where := fmt.Sprintf("output %s/%s", d.Kind, d.Name)
		apiVersion, _ := d.Data["apiVersion"].(string)
		root, ok, err := CRDSchema(apiVersion, d.Kind)
		if err != nil {
			ds.Errorf(file, where, "cannot read the embedded CRD: %v", err)
			continue
		}
		var vs []Violation
		switch {
		case ok:
			vs = Check(root, normalise(d.Data))
		default:
			var known bool
			vs, known = checkBuiltin(apiVersion, d.Kind, d.Data)
			if !known {
				ds.Errorf(file, where, "no schema for %s %s; expected one of the kinds nrl-k8s renders", apiVersion, d.Kind)
				continue
			}
		}
		for _, v := range vs {
			ds.Errorf(file, join(where, v.Path), "%s", v.Msg)
		}
	}
	return ds
}

// normalise makes JSON-decoded numbers and typed maps uniform for the walk.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e)
		}
		return out
	case int:
		return int64(t)
	case int32:
		return int64(t)
	}
	return v
}
