package interp

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// computed reports whether parts hold an interpolation, i.e. their text is
// another value of the configuration rather than literal text.
func computed(parts []part) bool {
	for _, pt := range parts {
		if pt.kind != litPart {
			return true
		}
	}
	return false
}

// relative turns an interpolation key into an absolute path. Leading dots
// are relative to the mapping that holds the value: `.x` is a sibling, `..x`
// a sibling of the parent.
func relative(at tree.Path, ref string) (tree.Path, error) {
	dots := 0
	for dots < len(ref) && ref[dots] == '.' {
		dots++
	}
	rest := tree.ParsePath(ref[dots:])
	if dots == 0 {
		if len(rest) == 0 {
			return nil, fmt.Errorf("empty interpolation key")
		}
		return rest, nil
	}
	up := dots // the value itself, then one level per extra dot
	if up > len(at) {
		return nil, fmt.Errorf("relative key %q climbs above the root", ref)
	}
	base := append(tree.Path(nil), at[:len(at)-up]...)
	return append(base, rest...), nil
}

// primitive types an unquoted resolver argument as OmegaConf does.
func primitive(s string) any {
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return s
}

// ToString renders a scalar the way Python's str() does, which is what
// OmegaConf writes when an interpolation is part of a larger string.
func ToString(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		return PyFloat(t), nil
	case bool:
		if t {
			return "True", nil
		}
		return "False", nil
	case nil:
		return "None", nil
	}
	return "", fmt.Errorf("cannot put a %s into a string", tree.KindOf(v))
}

// PyFloat formats f like Python's repr(float).
func PyFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "inf"
	}
	if math.IsInf(f, -1) {
		return "-inf"
	}
	if math.IsNaN(f) {
		return "nan"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	// Python uses fixed notation for 1e-4 <= |f| < 1e16, exponent form outside.
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}
