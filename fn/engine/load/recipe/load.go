// Package recipe loads a NeMo-RL recipe: the file and its `defaults:` chain,
// deep-merged base first, with NeMo-RL's `_override_` rule.
package recipe

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
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

// Loader reads recipes from a Source, memoising per path both the parsed
// file and the file merged with its `defaults:` chain: recipes share bases,
// a repository of runs loads the same base many times, and a `defaults:`
// diamond (two bases that share a base, nested) would otherwise cost time
// exponential in its depth. Each file is read and merged once per loader.
type Loader struct {
	Src    source.Source
	cache  map[string]*tree.Map
	merged map[string]*merged
	// sizes and nodes are the byte sizes and node counts (after alias
	// expansion) of the files read, for the run budget.
	sizes, nodes map[string]int
	// Job, when set, is shared by the loaders of one job (render-all's
	// workers): a run's bytes are admitted against it (JobBudget).
	Job *JobBudget
	// JobRun is the current run's place in the job, for Job.
	JobRun int
	// run is the budget of the current run (StartRun); nil: none.
	run *budget
}

// MaxRunInput bounds the bytes of all the files one run reads (recipe,
// profile, defaults and their chains, each counted once). Parsed and
// merged, input costs up to ~150 times its size in memory
// (docs/reliability.md); real runs read tens of kilobytes.
const MaxRunInput = 4 << 20

// MaxRunNodes bounds the YAML nodes one run parses, aliases expanded at
// every use, over all its files and overrides together: each document has
// its own bound (tree.MaxNodes), but a defaults chain or a list of
// overrides each just under it would add up (1.6-2.2 GB measured before
// this budget). Real runs parse a few thousand nodes.
const MaxRunNodes = tree.MaxNodes

// budget is what one run has read so far.
type budget struct {
	used, nodes int
	files       map[string]bool
}

// StartRun starts a new run's input budget (MaxRunInput bytes, MaxRunNodes
// nodes): files the run reads count once each, cached or not.
// pipeline.Render calls it; a loader that never starts a run has no budget
// beyond source.MaxFileSize per file.
func (l *Loader) StartRun() {
	l.run = &budget{files: map[string]bool{}}
}

// charge counts file against the run's budget.
func (l *Loader) charge(file string) error {
	if l.run == nil || l.run.files[file] {
		return nil
	}
	l.run.files[file] = true
	l.run.used += l.sizes[file]
	if l.run.used > MaxRunInput {
		return &Error{File: file, Msg: fmt.Sprintf("the run's input files add up to more than %d bytes with this one; expected a recipe, profile and defaults of at most that much together", MaxRunInput)}
	}
	if l.Job != nil {
		l.Job.Acquire(l.JobRun, l.sizes[file])
	}
	return l.ChargeNodes(file, "", l.nodes[file])
}

// ChargeNodes counts n parsed nodes (a file's, or an override's: field
// names it) against the run's node budget.
func (l *Loader) ChargeNodes(file, field string, n int) error {
	if l.run == nil {
		return nil
	}
	l.run.nodes += n
	if l.run.nodes > MaxRunNodes {
		return &Error{File: file, Field: field, Msg: fmt.Sprintf("the run's files and overrides expand to more than %d YAML nodes together with this one (aliases count at every use); expected a recipe, profile, defaults and overrides of at most that much together", MaxRunNodes)}
	}
	return nil
}

// merged is one file with its chain applied, and the chain's files.
type merged struct {
	tree  *tree.Map
	files []string
}

// NewLoader returns a loader over src.
func NewLoader(src source.Source) *Loader {
	return &Loader{Src: src, cache: map[string]*tree.Map{}, merged: map[string]*merged{}, sizes: map[string]int{}, nodes: map[string]int{}}
}

// Load reads file and everything its `defaults:` chain names. Files lists
// each file once, bases before the files that name them. The tree is the
// caller's to change: a chain merged for this call is handed over as it
// is (one render loads its recipe once), one the loader keeps for other
// loads (a base of another file loaded before) is copied.
func (l *Loader) Load(file string) (*Loaded, error) {
	m, err := l.load(file, nil, false)
	if err != nil {
		return nil, err
	}
	t := m.tree
	if l.merged[file] == m {
		t = tree.Copy(t).(*tree.Map)
	}
	return &Loaded{Tree: t, Files: append([]string(nil), m.files...)}, nil
}

// Parse reads one YAML file as a mapping, without following `defaults:`.
// The tree is the caller's (a copy of the loader's).
func (l *Loader) Parse(file string) (*tree.Map, error) {
	m, err := l.parsed(file)
	if err != nil {
		return nil, err
	}
	return tree.Copy(m).(*tree.Map), nil
}

// Holds reports whether file, as written (its `defaults:` not followed),
// sets the value at p: where a merged value came from, without a copy of
// the file's tree per question.
func (l *Loader) Holds(file string, p tree.Path) (bool, error) {
	m, err := l.parsed(file)
	if err != nil {
		return false, err
	}
	_, ok := tree.Lookup(m, p)
	return ok, nil
}

// parsed is file's tree as the loader keeps it, parsed on first use:
// shared, so callers only read it.
func (l *Loader) parsed(file string) (*tree.Map, error) {
	if t, ok := l.cache[file]; ok {
		if err := l.charge(file); err != nil {
			return nil, err
		}
		return t, nil
	}
	data, err := l.Src.ReadFile(file)
	if err != nil {
		return nil, err
	}
	l.sizes[file] = len(data)
	if l.run != nil && l.run.used+len(data) > MaxRunInput {
		return nil, l.charge(file) // over the bytes: not parsed at all
	}
	v, n, err := tree.ParseCount(file, data)
	if err != nil {
		return nil, err
	}
	l.nodes[file] = n
	if err := l.charge(file); err != nil {
		return nil, err
	}
	m, ok := v.(*tree.Map)
	if !ok {
		return nil, &Error{File: file, Msg: fmt.Sprintf("expected a mapping at the top level, found %s", tree.AKind(v))}
	}
	l.cache[file] = m
	return m, nil
}

// load returns file merged over its chain. Bases are kept for the next
// file that names them (keep is set for them): a kept result is shared,
// so callers only read it (tree.Merge copies what it takes from its
// source).
func (l *Loader) load(file string, stack []string, keep bool) (*merged, error) {
	for _, f := range stack {
		if f == file {
			return nil, &Error{File: stack[len(stack)-1], Field: "defaults", Msg: "cycle: " + strings.Join(append(stack, file), " -> ")}
		}
	}
	if done, ok := l.merged[file]; ok {
		for _, f := range done.files {
			if err := l.charge(f); err != nil {
				return nil, err
			}
		}
		return done, nil
	}
	if len(stack) >= MaxChain {
		return nil, &Error{File: file, Field: "defaults", Msg: fmt.Sprintf("chain deeper than %d files", MaxChain)}
	}
	m, err := l.parsed(file)
	if err != nil {
		return nil, err
	}
	bases, err := defaultsOf(file, m)
	if err != nil {
		return nil, err
	}
	acc := any(tree.NewMap())
	var files []string
	seen := map[string]bool{}
	for _, b := range bases {
		ref := source.Join(file, b.path)
		parent, err := l.load(ref, append(stack, file), true)
		if err != nil {
			var le *Error
			if errors.As(err, &le) {
				return nil, err
			}
			// A base that cannot be read: the file and field that name it
			// say where to look; the source's error says why.
			msg := fmt.Sprintf("base file %s: %v (chain: %s)", ref, trimName(err, ref), strings.Join(append(append([]string(nil), stack...), file, ref), " -> "))
			if errors.Is(err, source.ErrNotFound) {
				msg = fmt.Sprintf("base file %s not found (chain: %s)", ref, strings.Join(append(append([]string(nil), stack...), file, ref), " -> "))
			}
			return nil, &Error{File: file, Field: b.field, Msg: msg, Err: err}
		}
		acc = tree.Merge(acc, parent.tree)
		for _, f := range parent.files {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	files = append(files, file)
	// Merge copies m (the loader's own tree) into acc; `defaults:` is
	// dropped from the copy.
	res := tree.Merge(acc, m)
	rm, ok := res.(*tree.Map)
	if !ok {
		return nil, &Error{File: file, Msg: "merged recipe is not a mapping"}
	}
	rm.Delete("defaults")
	done := &merged{tree: rm, files: files}
	if keep {
		l.merged[file] = done
	}
	return done, nil
}

// trimName drops the "<path>: " a source error starts with.
func trimName(err error, name string) string {
	return strings.TrimPrefix(err.Error(), name+": ")
}

// base is one entry of `defaults:` and the field that holds it.
type base struct{ path, field string }

// defaultsOf reads `defaults:` as a string or a list of strings.
func defaultsOf(file string, m *tree.Map) ([]base, error) {
	v, ok := m.Get("defaults")
	if !ok || v == nil {
		return nil, nil
	}
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return nil, &Error{File: file, Field: "defaults", Msg: "empty path; expected a relative path to a base file"}
		}
		return []base{{t, "defaults"}}, nil
	case []any:
		var out []base
		for i, e := range t {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, &Error{File: file, Field: fmt.Sprintf("defaults[%d]", i), Msg: fmt.Sprintf("found %s; expected a relative path to a base file", tree.AKind(e))}
			}
			out = append(out, base{s, fmt.Sprintf("defaults[%d]", i)})
		}
		return out, nil
	}
	return nil, &Error{File: file, Field: "defaults", Msg: fmt.Sprintf("found %s; expected a path or a list of paths", tree.AKind(v))}
}
