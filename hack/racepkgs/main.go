// Command racepkgs prints the packages `make race` runs under the race
// detector, found from the code rather than listed by hand: every package
// below fn/ with tests whose tests or code start goroutines, directly or
// through a module package its code imports (find's rule). It fails when a
// package holding state for goroutines is linked into none of their test
// binaries. With -v it says why each package is in the set.
//
//	go run ./hack/racepkgs [-v]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// scope is what the rule covers: the product. The test harnesses
// (internal/) and tiers (tests/) start goroutines to drive servers and
// processes (kube-apiserver, KubeRay's manager, Helm); the product code they
// exercise is race-tested here.
const scope = "./fn/..."

func main() {
	verbose := flag.Bool("v", false, "say why each package is in the set")
	flag.Parse()
	if err := run(os.Stdout, ".", *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "racepkgs:", err)
		os.Exit(1)
	}
}

// run prints the race set of the module at root.
func run(w io.Writer, root string, verbose bool) error {
	pkgs, err := load(root)
	if err != nil {
		return err
	}
	res, err := find(pkgs, notRaced)
	if err != nil {
		return err
	}
	for _, p := range res.pkgs {
		if verbose {
			_, err = fmt.Fprintf(w, "./%s\t%s\n", p, res.why[p])
		} else {
			_, err = fmt.Fprintf(w, "./%s\n", p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// listed is the part of `go list -json` the rule reads.
type listed struct {
	ImportPath, Dir, Module            string
	GoFiles, TestGoFiles, XTestGoFiles []string
	Imports, TestImports, XTestImports []string
	Error                              *struct{ Err string }
}

// load lists the packages in scope, in the module at root.
func load(root string) ([]pkg, error) {
	inRoot := func(cmd *exec.Cmd) ([]byte, error) {
		cmd.Dir = root
		return cmd.Output()
	}
	mod, err := inRoot(exec.Command("go", "list", "-m"))
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	module := strings.TrimSpace(string(mod)) + "/"
	out, err := inRoot(exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,TestGoFiles,XTestGoFiles,Imports,TestImports,XTestImports,Error", scope))
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", scope, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []pkg
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list %s: %w", scope, err)
		}
		if l.Error != nil {
			return nil, fmt.Errorf("%s: %s", l.ImportPath, l.Error.Err)
		}
		p, err := fromListed(l, module)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func fromListed(l listed, module string) (pkg, error) {
	tests := slices.Concat(l.TestGoFiles, l.XTestGoFiles)
	p := pkg{
		path:        strings.TrimPrefix(l.ImportPath, module),
		imports:     within(l.Imports, module),
		testImports: within(slices.Concat(l.TestImports, l.XTestImports), module),
		shares:      slices.Contains(l.Imports, "sync") || slices.Contains(l.Imports, "sync/atomic"),
		hasTests:    len(tests) > 0,
	}
	var err error
	if p.starts, err = scan(l.Dir, l.GoFiles); err != nil {
		return p, err
	}
	p.testStarts, err = scan(l.Dir, tests)
	return p, err
}

// within keeps the module's own packages, as paths below the module.
func within(imports []string, module string) []string {
	var out []string
	for _, imp := range imports {
		if strings.HasPrefix(imp, module) {
			out = append(out, strings.TrimPrefix(imp, module))
		}
	}
	return out
}
