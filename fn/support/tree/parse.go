package tree

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Limits keep hostile input (alias bombs, absurd nesting) from exhausting the
// process: an error is better than an OOM kill in a CI job.
const (
	MaxDepth = 512
	MaxNodes = 2_000_000
)

// ParseError locates a problem in a source file.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Location implements diag.Located.
func (e *ParseError) Location() (file, field, msg string) {
	if e.Line > 0 {
		return e.File, "", fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.File, "", e.Msg
}

// Parse reads one YAML document into a tree. An empty document yields an
// empty map. Anchors, aliases and `<<` merge keys are expanded; a duplicate
// key is an error, as in OmegaConf's loader.
func Parse(file string, data []byte) (any, error) {
	v, _, err := ParseCount(file, data)
	return v, err
}

// ParseCount is Parse that also returns how many nodes the document
// expanded to (aliases counted at every use): the measure of what it costs
// in memory, which a run's budget adds up over its files and overrides
// (recipe.MaxRunNodes).
func ParseCount(file string, data []byte) (any, int, error) {
	c := &converter{file: file}
	v, err := c.parse(data)
	return v, c.nodes, err
}

func (c *converter) parse(data []byte) (any, error) {
	file := c.file
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return NewMap(), nil
		}
		return nil, &ParseError{File: file, Msg: cleanYAMLError(err, strings.Count(strings.TrimRight(string(data), "\n"), "\n")+1)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ParseError{File: file, Line: extra.Line, Column: extra.Column, Msg: "more than one YAML document; expected exactly one"}
	}
	if len(doc.Content) == 0 {
		return NewMap(), nil
	}
	return c.convert(doc.Content[0], 0)
}

func cleanYAMLError(err error, lines int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	// yaml.v3 numbers the lines of its parser's errors from 0 (its scanner's
	// from 1): "line 1" of a parser error is the file's line 2.
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, problem, _ := strings.Cut(rest, ": ")
		if n, err := strconv.Atoi(num); err == nil && parserProblems[problem] {
			// At the end of the file that is the line after the last.
			if n+1 > lines && lines > 0 {
				n = lines - 1
			}
			return fmt.Sprintf("line %d: %s", n+1, problem)
		}
	}
	return msg
}

// parserProblems are the messages of yaml.v3's parser (parserc.go); every
// other message comes from its scanner.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

type converter struct {
	file  string
	nodes int
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &ParseError{File: c.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) convert(n *yaml.Node, depth int) (any, error) {
	c.nodes++
	if c.nodes > MaxNodes {
		return nil, c.fail(n, "document expands to more than %d nodes (alias expansion?)", MaxNodes)
	}
	if depth > MaxDepth {
		return nil, c.fail(n, "nesting deeper than %d levels", MaxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "unknown alias %q", n.Value)
		}
		return c.convert(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return NewMap(), nil
		}
		return c.convert(n.Content[0], depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.fail(n, "unsupported YAML node")
}

func (c *converter) mapping(n *yaml.Node, depth int) (any, error) {
	out := newMapCap(len(n.Content) / 2)
	var merges []*Map
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
			ms, err := c.mergeSources(vn, depth)
			if err != nil {
				return nil, err
			}
			merges = append(merges, ms...)
			continue
		}
		if kn.Kind != yaml.ScalarNode {
			return nil, c.fail(kn, "mapping key must be a scalar")
		}
		key := kn.Value
		if _, dup := out.Get(key); dup {
			return nil, c.fail(kn, "duplicate key %q", key)
		}
		v, err := c.convert(vn, depth+1)
		if err != nil {
			return nil, err
		}
		out.Set(key, v)
	}
	// Merge keys give defaults: explicit keys win, earlier sources win over later.
	for _, src := range merges {
		for _, k := range src.Keys() {
			if _, ok := out.Get(k); !ok {
				v, _ := src.Get(k)
				out.Set(k, Copy(v))
			}
		}
	}
	return out, nil
}

func (c *converter) mergeSources(vn *yaml.Node, depth int) ([]*Map, error) {
	v, err := c.convert(vn, depth+1)
	if err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case *Map:
		return []*Map{t}, nil
	case []any:
		var out []*Map
		for _, e := range t {
			m, ok := e.(*Map)
			if !ok {
				return nil, c.fail(vn, "merge key `<<` needs mappings, found %s", AKind(e))
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, c.fail(vn, "merge key `<<` needs a mapping or a list of mappings, found %s", AKind(v))
}

// yaml11Bools are the YAML 1.1 spellings PyYAML (and so OmegaConf and
// nrl-k8s) read as booleans; yaml.v3 reads them as strings.
var yaml11Bools = map[string]bool{
	"yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	if n.Style == 0 && n.Tag == "!!str" {
		if b, ok := yaml11Bools[n.Value]; ok {
			return b, nil
		}
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "%s", cleanYAMLError(err, 0))
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "integer %q out of range", n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "%s", cleanYAMLError(err, 0))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// JSON cannot carry these; keep the spelling.
			return n.Value, nil
		}
		return f, nil
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	}
	return nil, c.fail(n, "unsupported YAML tag %s", n.Tag)
}
