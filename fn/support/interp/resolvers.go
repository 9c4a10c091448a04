package interp

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func (r *Resolver) userResolver(args []any) (any, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("takes no arguments")
	}
	if r.opts.User == "" {
		return nil, fmt.Errorf("no user: pass --user or set NRL_K8S_USER")
	}
	return r.opts.User, nil
}

func (r *Resolver) envResolver(args []any) (any, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("takes a variable name and an optional default")
	}
	name, ok := args[0].(string)
	if !ok || name == "" {
		return nil, fmt.Errorf("variable name must be a string")
	}
	if r.opts.Env != nil {
		if v, ok := r.opts.Env(name); ok {
			return v, nil
		}
	}
	if len(args) == 2 {
		if args[1] == nil {
			return nil, nil
		}
		return ToString(args[1])
	}
	return nil, fmt.Errorf("environment variable '%s' not found", name)
}

type number struct {
	i     int64
	f     float64
	float bool
}

func numbers(args []any) ([]number, error) {
	out := make([]number, 0, len(args))
	for _, a := range args {
		switch t := a.(type) {
		case int64:
			out = append(out, number{i: t, f: float64(t)})
		case float64:
			out = append(out, number{f: t, float: true})
		case bool:
			// Python bools are ints.
			n := int64(0)
			if t {
				n = 1
			}
			out = append(out, number{i: n, f: float64(n)})
		default:
			return nil, fmt.Errorf("argument %v is a %s, not a number", a, tree.KindOf(a))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("needs at least one argument")
	}
	return out, nil
}

func anyFloat(ns []number) bool {
	for _, n := range ns {
		if n.float {
			return true
		}
	}
	return false
}

func addResolver(args []any) (any, error) {
	ns, err := numbers(args)
	if err != nil {
		return nil, err
	}
	if anyFloat(ns) {
		s := 0.0
		for _, n := range ns {
			s += n.f
		}
		return s, nil
	}
	var s int64
	for _, n := range ns {
		s += n.i
	}
	return s, nil
}

func mulResolver(args []any) (any, error) {
	ns, err := numbers(args)
	if err != nil {
		return nil, err
	}
	if anyFloat(ns) {
		s := 1.0
		for _, n := range ns {
			s *= n.f
		}
		return s, nil
	}
	s := int64(1)
	for _, n := range ns {
		s *= n.i
	}
	return s, nil
}

// divResolver is Python's true division: always a float.
func divResolver(args []any) (any, error) {
	ns, err := numbers(args)
	if err != nil {
		return nil, err
	}
	if len(ns) != 2 {
		return nil, fmt.Errorf("takes exactly two arguments")
	}
	if ns[1].f == 0 {
		return nil, fmt.Errorf("division by zero")
	}
	return ns[0].f / ns[1].f, nil
}

func maxResolver(args []any) (any, error) {
	ns, err := numbers(args)
	if err != nil {
		return nil, err
	}
	best := 0
	for i, n := range ns {
		if n.f > ns[best].f {
			best = i
		}
	}
	if ns[best].float {
		return ns[best].f, nil
	}
	return ns[best].i, nil
}
