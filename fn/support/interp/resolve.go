package interp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Func is a resolver: `${name:a,b}` calls it with the typed arguments.
type Func func(args []any) (any, error)

// Options are what a resolution may read besides the tree itself. Nothing
// comes from the process environment unless the caller puts it here, so a
// render is a function of its inputs.
type Options struct {
	// User is the value of `${user:}`, already normalised
	// (runparams.NormalizeUser).
	User string
	// Env answers `${oc.env:VAR}`; nil means no variable is set.
	Env func(name string) (string, bool)
	// Resolvers adds or replaces resolvers by name.
	Resolvers map[string]Func
	// External are top-level keys the caller put into the tree from
	// outside it (the run's name under run:). With ${oc.env:...} and
	// ${user:} they are the values Splice is asked about.
	External []string
	// Splice, when set, is asked about every interpolation at p (expr is
	// its text) whose value comes, directly or through other keys, from
	// outside the tree; its error fails the resolution at p. A caller
	// whose strings are shell commands refuses there a value that is not
	// one plain word.
	Splice func(p tree.Path, expr, value string) error
}

// Error is a failed interpolation, located by the key path that holds it.
type Error struct {
	Path  string // dotted key path of the value being resolved
	Value string // the raw value
	Msg   string
	Err   error // the cause, when there is one
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: cannot resolve %q: %s", e.Path, e.Value, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Missing is OmegaConf's mandatory-value marker; it is kept as is and only an
// interpolation that reads it fails.
const Missing = "???"

// maxSteps caps the work of one resolver so that reference chains built to
// explode (each key naming the previous one twice) fail instead of hanging.
const maxSteps = 1_000_000

// maxProduced caps the bytes one resolver may build or copy: memoised keys
// that each repeat the previous one twice (a "billion laughs" of
// interpolations) double per key in a few bytes of input, and would
// otherwise exhaust memory long before maxSteps.
const maxProduced = 32 << 20

// Resolver resolves values of one tree on demand, memoising each key so that
// a value is resolved once and an escaped `${X}` is never read twice.
type Resolver struct {
	root   any
	opts   Options
	funcs  map[string]Func
	memo   map[string]memoised
	active map[string]bool
	steps  int
	// produced counts the bytes resolved values have cost so far.
	produced int64
	// outside is whether what is being resolved has read a value from
	// outside the tree.
	outside  bool
	external map[string]bool
}

// memoised is a resolved string value and whether it read a value from
// outside the tree.
type memoised struct {
	v       any
	outside bool
}

// New prepares a resolver over root (which it does not modify).
func New(root any, opts Options) *Resolver {
	r := &Resolver{root: root, opts: opts, memo: map[string]memoised{}, active: map[string]bool{}, external: map[string]bool{}}
	for _, k := range opts.External {
		r.external[k] = true
	}
	r.funcs = map[string]Func{
		"user":   r.userResolver,
		"oc.env": r.envResolver,
		"add":    addResolver,
		"mul":    mulResolver,
		"div":    divResolver,
		"max":    maxResolver,
	}
	for name, f := range opts.Resolvers {
		r.funcs[name] = f
	}
	return r
}

// Resolve returns a resolved deep copy of root.
func Resolve(root any, opts Options) (any, error) {
	return New(root, opts).Value(nil)
}

// Value returns the fully resolved value at path p.
func (r *Resolver) Value(p tree.Path) (any, error) {
	raw, done, err := r.locate(p)
	if err != nil {
		return nil, err
	}
	if done {
		return tree.Copy(raw), nil
	}
	return r.node(p, raw)
}

func pathKey(p tree.Path) string { return strings.Join(p, "\x00") }

// locate walks to p; when it crosses a value that is itself an interpolation
// it resolves that first, and what lies below is then already resolved.
func (r *Resolver) locate(p tree.Path) (any, bool, error) {
	cur := r.root
	done := false
	for i, seg := range p {
		if s, ok := cur.(string); ok && !done && HasInterpolation(s) {
			v, err := r.str(p[:i], s)
			if err != nil {
				return nil, false, err
			}
			cur, done = v, true
		}
		next, ok := tree.Lookup(cur, tree.Path{seg})
		if !ok {
			return nil, false, &notFound{path: p}
		}
		cur = next
	}
	return cur, done, nil
}

type notFound struct{ path tree.Path }

func (e *notFound) Error() string {
	return fmt.Sprintf("interpolation key '%s' not found", e.path.String())
}

func (r *Resolver) node(p tree.Path, raw any) (any, error) {
	switch t := raw.(type) {
	case *tree.Map:
		out := tree.NewMap()
		for _, k := range t.Keys() {
			v, _ := t.Get(k)
			rv, err := r.node(append(append(tree.Path(nil), p...), k), v)
			if err != nil {
				return nil, err
			}
			out.Set(k, rv)
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			rv, err := r.node(append(append(tree.Path(nil), p...), strconv.Itoa(i)), v)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	case string:
		if HasInterpolation(t) {
			return r.str(p, t)
		}
		return t, nil
	default:
		return raw, nil
	}
}

// str resolves the string value s found at p.
func (r *Resolver) str(p tree.Path, s string) (any, error) {
	k := pathKey(p)
	if m, ok := r.memo[k]; ok {
		if err := r.charge(p, s, m.v); err != nil {
			return nil, err
		}
		r.outside = r.outside || m.outside
		return tree.Copy(m.v), nil
	}
	if r.active[k] {
		return nil, &Error{Path: p.String(), Value: s, Msg: "interpolation cycle"}
	}
	r.active[k] = true
	defer delete(r.active, k)
	parts, err := parseTop(s)
	if err != nil {
		return nil, &Error{Path: p.String(), Value: s, Msg: "syntax error: " + err.Error()}
	}
	outer := r.outside
	r.outside = false
	v, err := r.eval(p, parts, true)
	if err != nil {
		var ie *Error
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, &Error{Path: p.String(), Value: s, Msg: err.Error(), Err: err}
	}
	if err := r.charge(p, s, v); err != nil {
		return nil, err
	}
	r.memo[k] = memoised{v, r.outside}
	r.outside = outer || r.outside
	return tree.Copy(v), nil
}

// charge counts the copy of v that str hands out against maxProduced.
func (r *Resolver) charge(p tree.Path, s string, v any) error {
	r.produced += sizeOf(v)
	if r.produced > maxProduced {
		return &Error{Path: p.String(), Value: truncate(s), Msg: fmt.Sprintf("resolution produces more than %d bytes (interpolations that repeat each other?)", maxProduced)}
	}
	return nil
}

// sizeOf approximates the bytes a resolved value occupies.
func sizeOf(v any) int64 {
	switch t := v.(type) {
	case string:
		return int64(len(t)) + 16
	case *tree.Map:
		n := int64(48)
		for _, k := range t.Keys() {
			c, _ := t.Get(k)
			n += int64(len(k)) + 16 + sizeOf(c)
		}
		return n
	case []any:
		n := int64(24)
		for _, e := range t {
			n += sizeOf(e)
		}
		return n
	}
	return 16
}

// truncate keeps error messages short when the offending value is not.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// eval evaluates a parsed sequence: one interpolation alone keeps its type,
// anything mixed with text becomes a string. top is the sequence of a
// value of the tree (not of a key or an argument): Splice is asked there.
func (r *Resolver) eval(p tree.Path, parts []part, top bool) (any, error) {
	r.steps++
	if r.steps > maxSteps {
		return nil, fmt.Errorf("resolution takes more than %d steps", maxSteps)
	}
	if len(parts) == 1 && parts[0].kind != litPart {
		return r.spliced(p, parts[0], top)
	}
	var b strings.Builder
	for _, pt := range parts {
		if pt.kind == litPart {
			b.WriteString(pt.text)
			continue
		}
		v, err := r.spliced(p, pt, top)
		if err != nil {
			return nil, err
		}
		s, err := ToString(v)
		if err != nil {
			return nil, err
		}
		if int64(b.Len()+len(s)) > maxProduced-r.produced {
			return nil, fmt.Errorf("resolution produces more than %d bytes (interpolations that repeat each other?)", maxProduced)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// spliced is one, then Splice's judgement of a value from outside the tree.
func (r *Resolver) spliced(p tree.Path, pt part, top bool) (any, error) {
	outer := r.outside
	r.outside = false
	v, err := r.one(p, pt)
	if err == nil && top && r.outside && r.opts.Splice != nil {
		if s, ok := v.(string); ok {
			err = r.opts.Splice(p, pt.raw, s)
		}
	}
	r.outside = outer || r.outside
	return v, err
}

func (r *Resolver) one(p tree.Path, pt part) (any, error) {
	switch pt.kind {
	case nodePart:
		text, err := r.eval(p, pt.path, false)
		if err != nil {
			return nil, err
		}
		ref, ok := text.(string)
		if !ok {
			ref, err = ToString(text)
			if err != nil {
				return nil, err
			}
		}
		target, err := relative(p, strings.TrimSpace(ref))
		if err == nil {
			var v any
			if v, err = r.Value(target); err == nil {
				if v != Missing {
					r.outside = r.outside || (len(target) > 0 && r.external[target[0]])
					return v, nil
				}
				err = fmt.Errorf("key '%s' is a mandatory value (???) that is not set", target.String())
			}
		}
		if computed(pt.path) {
			// The key came from another value: naming it would print that
			// value (a PR could point it at anything the run can read).
			return nil, hidden(err, "the key computed by a nested interpolation does not resolve")
		}
		return nil, err
	case callPart:
		f, ok := r.funcs[pt.resolver]
		if !ok {
			return nil, fmt.Errorf("unsupported interpolation type %s", pt.resolver)
		}
		args := make([]any, 0, len(pt.args))
		anyComputed := false
		for _, a := range pt.args {
			v, err := r.arg(p, a)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
			anyComputed = anyComputed || computed(a.parts)
		}
		v, err := f(args)
		r.outside = r.outside || pt.resolver == "oc.env" || pt.resolver == "user"
		if err != nil {
			if anyComputed {
				// Resolver messages quote their arguments; computed ones
				// are other values of the file and are not repeated.
				return nil, hidden(err, fmt.Sprintf("resolver %s fails on an argument computed by a nested interpolation", pt.resolver))
			}
			return nil, fmt.Errorf("resolver %s: %w", pt.resolver, err)
		}
		return v, nil
	}
	return pt.text, nil
}

func (r *Resolver) arg(p tree.Path, a arg) (any, error) {
	if a.quoted {
		v, err := r.eval(p, a.parts, false)
		if err != nil {
			return nil, err
		}
		if s, ok := v.(string); ok {
			return s, nil
		}
		return ToString(v)
	}
	if len(a.parts) == 0 {
		return "", nil
	}
	if len(a.parts) == 1 && a.parts[0].kind == litPart {
		return primitive(a.parts[0].text), nil
	}
	return r.eval(p, a.parts, false)
}

// hiddenError replaces a message that would quote a resolved value; the
// original stays reachable through Unwrap for callers that log nothing.
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg + " (the value is not shown)" }
func (e *hiddenError) Unwrap() error { return e.err }

func hidden(err error, msg string) error {
	// Even an *Error located at another key is hidden: that key's path is
	// the computed text.
	return &hiddenError{msg: msg, err: err}
}
