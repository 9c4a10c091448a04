// Package hydra reads Hydra command-line overrides (`a.b=1`, `+a.b=1`,
// `++a.b=1`, `~a.b`) and applies them to a recipe tree, and finds the
// overrides that an entrypoint script passes to NeMo-RL's `run_*.py`.
package hydra

import (
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/suggest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Op is what an override does.
type Op int

const (
	Set    Op = iota // key=value (key must exist)
	Add              // +key=value (key must not exist)
	Force            // ++key=value (set or add)
	Delete           // ~key or ~key=value
)

// Override is one parsed override.
type Override struct {
	Raw   string
	Op    Op
	Key   tree.Path
	Value any
	// Dynamic is set when the value is only known in the pod (it reads a
	// shell variable such as ${NRL_MODEL_PATH}).
	Dynamic bool
}

var keyRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+|\[[0-9]+\])*$`)

// Parse reads one override.
func Parse(raw string) (Override, error) {
	o := Override{Raw: raw}
	s := raw
	switch {
	case strings.HasPrefix(s, "++"):
		o.Op, s = Force, s[2:]
	case strings.HasPrefix(s, "+"):
		o.Op, s = Add, s[1:]
	case strings.HasPrefix(s, "~"):
		o.Op, s = Delete, s[1:]
	}
	key, val, hasVal := strings.Cut(s, "=")
	if !keyRE().MatchString(key) {
		return o, fmt.Errorf("override %q: key %q is not a dotted key path", raw, key)
	}
	o.Key = tree.ParsePath(key)
	if !hasVal && o.Op != Delete {
		return o, fmt.Errorf("override %q: expected key=value", raw)
	}
	if hasVal {
		o.Dynamic = strings.Contains(val, "$")
		o.Value = parseValue(val)
	}
	return o, nil
}

// parseValue types a value the way Hydra's grammar does for the cases that
// recipes use: numbers, booleans, null, quoted strings, flow lists/maps.
// It never fails: anything YAML cannot read is a plain string to Hydra.
func parseValue(val string) any {
	if val == "" {
		return ""
	}
	v, err := tree.Parse("override", []byte(val))
	if err != nil { // e.g. `a:b:c`
		return val
	}
	if m, ok := v.(*tree.Map); ok && m.Len() == 0 && strings.TrimSpace(val) != "{}" {
		return val
	}
	return v
}

// Apply applies o to root, with Hydra's rules on existing keys.
func Apply(root *tree.Map, o Override) error {
	_, exists := tree.Lookup(root, o.Key)
	switch o.Op {
	case Set:
		if !exists {
			return fmt.Errorf("override %q: key '%s' is not in the recipe%s; use +%s=... to add it", o.Raw, o.Key, didYouMean(root, o.Key), o.Key)
		}
		return tree.SetPath(root, o.Key, o.Value)
	case Add:
		if exists {
			return fmt.Errorf("override %q: key '%s' is already in the recipe; use %s=VALUE (set) or ++%s=VALUE (add or set)", o.Raw, o.Key, o.Key, o.Key)
		}
		return tree.SetPath(root, o.Key, o.Value)
	case Force:
		return tree.SetPath(root, o.Key, o.Value)
	case Delete:
		if !exists {
			return fmt.Errorf("override %q: key '%s' is not in the recipe%s, nothing to delete", o.Raw, o.Key, didYouMean(root, o.Key))
		}
		tree.DeletePath(root, o.Key)
	}
	return nil
}

// didYouMean names the recipe key a missing override path was probably
// meant to reach: the first segment that is not in the recipe is replaced
// by its nearest sibling; the whole corrected path when it exists, else the
// corrected part. "" when no sibling is close.
func didYouMean(root *tree.Map, key tree.Path) string {
	var cur any = root
	for i, seg := range key {
		m, ok := cur.(*tree.Map)
		if !ok {
			return ""
		}
		v, ok := m.Get(seg)
		if ok {
			cur = v
			continue
		}
		near := suggest.Closest(seg, m.Keys())
		if near == "" {
			return ""
		}
		fixed := append(append(append(tree.Path(nil), key[:i]...), near), key[i+1:]...)
		if _, ok := tree.Lookup(root, fixed); ok {
			return fmt.Sprintf(" (did you mean '%s'?)", fixed)
		}
		return fmt.Sprintf(" (no key '%s'; did you mean '%s'?)", key[:i+1], fixed[:i+1])
	}
	return ""
}
