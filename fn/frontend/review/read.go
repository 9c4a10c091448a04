package review

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// kustomizationFiles are the names kustomize reads as a kustomization
// (sigs.k8s.io/kustomize/api/konfig RecognizedKustomizationFileNames).
var kustomizationFiles = map[string]bool{"kustomization.yaml": true, "kustomization.yml": true, "Kustomization": true}

// ReadRender parses a render file (one run named after it) or every *.yaml
// and *.yml under a tree; isFile says which it was. Two files of a tree
// with the same base name would be the same run: that is an error. The
// trees come from a pull request, so a symlink or a file that is not
// regular is refused unread, whatever it points at (a leaked first line of
// a host file would be printed as a parse error otherwise).
func ReadRender(p string, untracked bool, stdin io.Reader) (Render, bool, map[string][]string, error) {
	r, isFile, err := readRenderFiles(p, stdin)
	if err != nil || r != nil {
		return r, isFile, nil, err
	}
	// A runs repository (readRenderFiles leaves it to this).
	r, failed, err := readRunsRepo(p, untracked)
	return r, false, failed, err
}

// readRenderFiles reads a stream, a render file or a tree; it returns a nil
// render and no error for a runs repository.
func readRenderFiles(p string, stdin io.Reader) (Render, bool, error) {
	if data, ok, err := readStream(p, stdin); ok {
		if err != nil {
			return nil, false, err
		}
		name := "stdin"
		if p != "-" {
			name = filepath.Base(p)
		}
		r, err := Parse(name, p, data)
		return Render{name: r}, true, err
	}
	st, err := os.Lstat(p)
	if err != nil {
		return nil, false, err
	}
	if err := regularOrDir(p, st.Mode()); err != nil {
		return nil, false, err
	}
	if st.IsDir() && isRunsRepo(p) {
		// Rendered as render-all does (with its handling of the PR's files).
		return nil, false, nil
	}
	out := Render{}
	from := map[string]string{}
	var budget source.RenderBudget
	add := func(file string) error {
		if st, err := os.Lstat(file); err == nil {
			if err := budget.Take(filepath.ToSlash(file), st.Size()); err != nil {
				return err
			}
		}
		data, err := source.ReadLimited(filepath.ToSlash(file), file, source.MaxRenderSize)
		if err != nil {
			return err
		}
		base := filepath.Base(file)
		name := strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
		if prev, dup := from[name]; dup {
			return fmt.Errorf("%s: run %q is also %s; expected one file per run name in a tree", file, name, prev)
		}
		r, err := Parse(name, filepath.ToSlash(file), data)
		if err != nil {
			return err
		}
		from[name] = file
		out[name] = r
		return nil
	}
	if !st.IsDir() {
		return out, true, add(p)
	}
	err = filepath.WalkDir(p, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if file != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(file, ".yaml") && !strings.HasSuffix(file, ".yml") {
			return nil
		}
		if kustomizationFiles[d.Name()] {
			// An overlay's entry point beside the renders (e.g. a
			// manifests/kustomization.yaml listing them): not a run.
			return nil
		}
		if err := regularOrDir(file, d.Type()); err != nil {
			return err
		}
		return add(file)
	})
	return out, false, err
}

// readStream reads an argument that is a stream the user handed over on
// the command line, not a file of a tree: "-" (stdin) and the file
// descriptors of process substitution (`diff <(git show HEAD:m.yaml)
// m.yaml` passes /dev/fd/63, a link to a pipe). ok is false for anything
// else, which ReadRender reads with the tree rules (no links, regular files).
func readStream(p string, stdin io.Reader) ([]byte, bool, error) {
	var r io.Reader
	switch {
	case p == "-":
		r = stdin
	case p == "/dev/stdin" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/"):
		f, err := os.Open(p)
		if err != nil {
			return nil, true, err
		}
		defer func() { _ = f.Close() }() // read-only
		r = f
	default:
		return nil, false, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, source.MaxRenderSize+1))
	if err != nil {
		return nil, true, fmt.Errorf("%s: cannot read: %w", p, err)
	}
	if len(b) > source.MaxRenderSize {
		return nil, true, fmt.Errorf("%s: over the %d-byte limit for a render", p, source.MaxRenderSize)
	}
	return b, true, nil
}

// regularOrDir refuses a symlink or special file without reading it.
func regularOrDir(p string, m fs.FileMode) error {
	switch {
	case safetext.Inline(p) != p:
		// The name would become the run's name in the summary.
		return fmt.Errorf("%s: the name holds a newline or control character; refused: diff reads files with printable names only", safetext.Inline(p))
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symlink; refused: diff reads regular files only (links are not followed)", p)
	case !m.IsDir() && !m.IsRegular():
		return fmt.Errorf("%s: is not a regular file; refused: diff reads regular files only", p)
	}
	return nil
}

// OnlyRun is the run of a one-file render.
func OnlyRun(r Render) *RunFacts {
	for _, run := range r {
		return run
	}
	return nil
}
