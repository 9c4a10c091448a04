// Package recipe loads a NeMo-RL recipe: the file and its `defaults:` chain,
// deep-merged base first, with NeMo-RL's `_override_` rule.
package recipe

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tree"
)

// MaxChain bounds the depth of a `defaults:` chain.
const MaxChain = 64

// Error is a loading problem located by file and key path.
type Error struct {
	File  string
	Field string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	loc := e.File
	if e.Field != "" {
		loc += ": " + e.Field
	}
	return loc + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Location implements diag.Located.
func (e *Error) Location() (file, field, msg string) { return e.File, e.Field, e.Msg }

// Loaded is a merged recipe and the files it came from, base first.
type Loaded struct {
	Tree  *tree.Map
	Files []string
}

// Loader reads recipes from a Source, caching parsed files (recipes share
// bases, and a repository of runs loads the same base many times).
type Loader struct {
	Src   source.Source
	cache map[string]*tree.Map
}

// NewLoader returns a loader over src.
func NewLoader(src source.Source) *Loader {
	return &Loader{Src: src, cache: map[string]*tree.Map{}}
}

// Load reads file and everything its `defaults:` chain names.
func (l *Loader) Load(file string) (*Loaded, error) {
	out := &Loaded{}
	t, err := l.load(file, nil, out)
	if err != nil {
		return nil, err
	}
	out.Tree = t
	return out, nil
}

// Parse reads one YAML file as a mapping, without following `defaults:`.
func (l *Loader) Parse(file string) (*tree.Map, error) {
	if t, ok := l.cache[file]; ok {
		return tree.Copy(t).(*tree.Map), nil
	}
	data, err := l.Src.ReadFile(file)
	if err != nil {
		return nil, err
	}
	v, err := tree.Parse(file, data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*tree.Map)
	if !ok {
		return nil, &Error{File: file, Msg: fmt.Sprintf("expected a mapping at the top level, found %s", tree.AKind(v))}
	}
	l.cache[file] = m
	return tree.Copy(m).(*tree.Map), nil
}

func (l *Loader) load(file string, stack []string, out *Loaded) (*tree.Map, error) {
	for _, f := range stack {
		if f == file {
			return nil, &Error{File: stack[len(stack)-1], Field: "defaults", Msg: "cycle: " + strings.Join(append(stack, file), " -> ")}
		}
	}
	if len(stack) >= MaxChain {
		return nil, &Error{File: file, Field: "defaults", Msg: fmt.Sprintf("chain deeper than %d files", MaxChain)}
	}
	m, err := l.Parse(file)
	if err != nil {
		if errors.Is(err, source.ErrNotFound) && len(stack) > 0 {
			return nil, &Error{File: stack[len(stack)-1], Field: "defaults", Msg: fmt.Sprintf("base file %s not found (chain: %s)", file, strings.Join(append(stack, file), " -> ")), Err: err}
		}
		return nil, err
	}
	bases, err := defaultsOf(file, m)
	if err != nil {
		return nil, err
	}
	m.Delete("defaults")
	merged := any(tree.NewMap())
	for _, b := range bases {
		parent, err := l.load(source.Join(file, b), append(stack, file), out)
		if err != nil {
			return nil, err
		}
		merged = tree.Merge(merged, parent)
	}
	out.Files = append(out.Files, file)
	res := tree.Merge(merged, m)
	rm, ok := res.(*tree.Map)
	if !ok {
		return nil, &Error{File: file, Msg: "merged recipe is not a mapping"}
	}
	return rm, nil
}

// defaultsOf reads `defaults:` as a string or a list of strings.
func defaultsOf(file string, m *tree.Map) ([]string, error) {
	v, ok := m.Get("defaults")
	if !ok || v == nil {
		return nil, nil
	}
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return nil, &Error{File: file, Field: "defaults", Msg: "empty path; expected a relative path to a base file"}
		}
		return []string{t}, nil
	case []any:
		var out []string
		for i, e := range t {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, &Error{File: file, Field: fmt.Sprintf("defaults[%d]", i), Msg: fmt.Sprintf("found %s; expected a relative path to a base file", tree.AKind(e))}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, &Error{File: file, Field: "defaults", Msg: fmt.Sprintf("found %s; expected a path or a list of paths", tree.AKind(v))}
}
