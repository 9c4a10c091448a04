package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// notRaced are packages the rule finds that `make race` leaves out, each with
// why. An entry the rule no longer finds is an error, so none outlives its
// reason.
var notRaced = map[string]string{
	"fn/frontend/chartgen": "its concurrency is fn/engine/batch's, race-tested there and through krm and renderall; " +
		"its own tests render every packaged profile under Helm's engine, the slowest package of go test ./... without the detector " +
		"(docs/performance.md, \"The race detector\")",
}

// pkg is what the rule needs to know of one package, read from `go list`
// and from its files.
type pkg struct {
	path        string   // below the module, e.g. fn/support/parallel
	imports     []string // module packages its non-test code imports
	testImports []string // module packages its tests import
	starts      bool     // its non-test code starts a goroutine
	testStarts  bool     // its tests start a goroutine
	shares      bool     // its non-test code imports sync or sync/atomic
	hasTests    bool
}

// result is the race set and, for each package, why it is in it.
type result struct {
	pkgs []string
	why  map[string]string
}

// find applies the rule. The detector sees a race only where a test runs
// two goroutines, so the race set is every package with tests whose tests
// or code start one, directly or through a module package its code
// imports. Every package holding state for goroutines (sync, sync/atomic)
// must be linked into one of those test binaries.
func find(pkgs []pkg, skip map[string]string) (result, error) {
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.path] = p
	}
	via := map[string]string{} // package -> the starter its code reaches ("" if none)
	var reach func(string) string
	reach = func(path string) string {
		if v, ok := via[path]; ok {
			return v
		}
		via[path] = ""
		p := byPath[path]
		if p.starts {
			via[path] = path
			return path
		}
		for _, imp := range p.imports {
			if s := reach(imp); s != "" {
				via[path] = s
				return s
			}
		}
		return ""
	}
	res := result{why: map[string]string{}}
	var errs []string
	found := map[string]bool{}
	for _, p := range pkgs {
		s := reach(p.path)
		switch {
		case p.starts && !p.hasTests:
			errs = append(errs, fmt.Sprintf("%s starts goroutines and has no tests for the race detector to run", p.path))
		case !p.testStarts && s == "":
		case !p.hasTests:
		default:
			found[p.path] = true
			if _, ok := skip[p.path]; ok {
				continue
			}
			res.pkgs = append(res.pkgs, p.path)
			res.why[p.path] = reason(p, s)
		}
	}
	for path := range skip {
		if !found[path] {
			errs = append(errs, fmt.Sprintf("%s is listed in notRaced but the rule no longer finds it: remove the entry", path))
		}
	}
	errs = append(errs, unreached(pkgs, byPath, res.pkgs)...)
	sort.Strings(res.pkgs)
	if len(errs) > 0 {
		sort.Strings(errs)
		return res, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return res, nil
}

func reason(p pkg, starter string) string {
	switch {
	case p.starts:
		return "its code starts goroutines"
	case starter != "":
		return "its code reaches " + starter + ", which starts goroutines"
	default:
		return "its tests start goroutines"
	}
}

// unreached names the packages holding state for goroutines that no race
// test binary links, so the detector would never watch their state.
func unreached(pkgs []pkg, byPath map[string]pkg, race []string) []string {
	linked := map[string]bool{}
	var link func(string)
	link = func(path string) {
		if linked[path] {
			return
		}
		linked[path] = true
		for _, imp := range byPath[path].imports {
			link(imp)
		}
	}
	for _, r := range race {
		link(r)
		for _, imp := range byPath[r].testImports {
			link(imp)
		}
	}
	var errs []string
	for _, p := range pkgs {
		if p.shares && !linked[p.path] {
			errs = append(errs, fmt.Sprintf("%s holds state for goroutines (imports sync) but no race-tested package links it: give it a test that starts goroutines", p.path))
		}
	}
	return errs
}

// scan reads which of the files start a goroutine: a `go` statement, or a
// `.Go(` call in a file importing sync (WaitGroup.Go) or errgroup.
func scan(dir string, files []string) (bool, error) {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return false, err
		}
		if startsGoroutine(f) {
			return true, nil
		}
	}
	return false, nil
}

func startsGoroutine(f *ast.File) bool {
	groups := false
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		groups = groups || p == "sync" || p == "golang.org/x/sync/errgroup"
	}
	starts := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			starts = true
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && groups && sel.Sel.Name == "Go" {
				starts = true
			}
		}
		return !starts
	})
	return starts
}
