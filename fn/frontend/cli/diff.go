package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

func diffCmd() *cobra.Command {
	var output string
	var untracked bool
	c := &cobra.Command{
		Use:   "diff OLD NEW [--output text|markdown]",
		Short: "Summarise what changes between two renders (files or trees): GPUs, nodes, images, objects, DRA, scheduling, entrypoints",
		Long: `Compare two renders and print what a reviewer needs: per run, GPU nodes and
GPUs requested (before → after), image changes, new, removed and changed
objects, DRA claims and objects, KAI scheduling fields, and entrypoint changes
as a line diff. Unchanged runs are counted, not listed.

OLD and NEW are each a render file, a tree (every *.yaml below it, one run
per file, named after the file, e.g. a runs repository's manifests/), or a
runs repository (a directory with runs/): its runs are rendered, and the
warnings they gain or lose (idle nodes, ...) are reported too. Two files are
compared as one run, named after NEW. Typical use in a PR job:

  git worktree add /tmp/base origin/main
  nrl-k8s diff /tmp/base/runs-repo runs-repo --output markdown

The command is informational: it exits 0 whatever changed, 1 only when an
input cannot be read or is not a render.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "markdown" {
				return usageError{fmt.Errorf("--output %q: expected text or markdown", output)}
			}
			if args[0] == "-" && args[1] == "-" {
				return usageError{fmt.Errorf("OLD and NEW are both -: at most one of them can be stdin")}
			}
			old, oldFile, oldFailed, err := readRender(args[0], untracked, cmd.InOrStdin())
			if err != nil {
				return err
			}
			cur, curFile, curFailed, err := readRender(args[1], untracked, cmd.InOrStdin())
			if err != nil {
				return err
			}
			// A run that fails on either side is in neither: the others
			// are still summarised, and the command then fails.
			for _, f := range []map[string][]string{oldFailed, curFailed} {
				for name := range f {
					delete(old, name)
					delete(cur, name)
				}
			}
			if oldFile && curFile {
				// Two files are two versions of one run, whatever they are called.
				o, c := onlyRun(old), onlyRun(cur)
				o.Name = c.Name
				old = review.Render{c.Name: o}
			}
			s := review.Diff(old, cur)
			text := s.Text()
			if output == "markdown" {
				text = s.Markdown()
			}
			// The summary quotes the PR's text (names, images, annotations)
			// and is posted as a PR comment or printed to the CI log: the
			// last guard is per line (fn/support/safetext).
			w := safetext.Writer(cmd.OutOrStdout())
			if _, err := fmt.Fprint(w, text); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			return renderFailures(failedSide{args[0], oldFailed}, failedSide{args[1], curFailed})
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "text, or markdown for a PR comment")
	completeValues(c, "output", "text", "markdown")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "runs repositories in a git work tree: also read files git does not track")
	return c
}

// readRender parses a render file (one run named after it) or every *.yaml
// and *.yml under a tree; isFile says which it was. Two files of a tree
// with the same base name would be the same run: that is an error. The
// trees come from a pull request, so a symlink or a file that is not
// regular is refused unread, whatever it points at (a leaked first line of
// a host file would be printed as a parse error otherwise).
func readRender(p string, untracked bool, stdin io.Reader) (review.Render, bool, map[string][]string, error) {
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
func readRenderFiles(p string, stdin io.Reader) (review.Render, bool, error) {
	if data, ok, err := readStream(p, stdin); ok {
		if err != nil {
			return nil, false, err
		}
		name := "stdin"
		if p != "-" {
			name = filepath.Base(p)
		}
		r, err := review.Parse(name, p, data)
		return review.Render{name: r}, true, err
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
	out := review.Render{}
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
		r, err := review.Parse(name, filepath.ToSlash(file), data)
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
// else, which readRender reads with the tree rules (no links, regular files).
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

// onlyRun is the run of a one-file render.
func onlyRun(r review.Render) *review.RunFacts {
	for _, run := range r {
		return run
	}
	return nil
}
