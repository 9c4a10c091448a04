package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

func diffCmd() *cobra.Command {
	var output, fullFile string
	var maxSize int
	var untracked bool
	c := &cobra.Command{
		Use:   "diff OLD NEW [--output text|markdown]",
		Short: "Summarise what changes between two renders (files or trees): GPUs, nodes, images, objects, DRA, scheduling, entrypoints",
		Long: `Compare two renders and print what a reviewer needs: per run, GPU nodes and
GPUs requested (before → after), image changes, new, removed and changed
objects, DRA claims and objects, KAI and Kueue scheduling (queues, priority
classes, topology), and entrypoint changes
as a line diff. Unchanged runs are counted, not listed.

OLD and NEW are each a render file, a tree (every *.yaml below it, one run
per file, named after the file, e.g. a runs repository's manifests/), or a
runs repository (a directory with runs/): its runs are rendered, and the
warnings they gain or lose (idle nodes, ...) are reported too. Two files are
compared as one run, named after NEW. Typical use in a PR job:

  git worktree add /tmp/base origin/main
  nrl-k8s diff /tmp/base/runs-repo runs-repo --output markdown

--output markdown is a pull-request comment: every run whose security,
scope or privileges change is named first, then the runs whose images
change, the new and removed runs, and the runs whose queue, priority class
or topology change; the tables follow in that order (the rest by GPUs
moved), cut to --max-size bytes (GitHub refuses comments over 65,536
characters) by leaving out whole run tables from the end, with a line
counting them; --full FILE writes the uncut summary (upload it as a CI
artifact).

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
			old, oldFile, oldFailed, err := review.ReadRender(args[0], untracked, cmd.InOrStdin())
			if err != nil {
				return err
			}
			cur, curFile, curFailed, err := review.ReadRender(args[1], untracked, cmd.InOrStdin())
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
				o, c := review.OnlyRun(old), review.OnlyRun(cur)
				o.Name = c.Name
				old = review.Render{c.Name: o}
			}
			s := review.Diff(old, cur)
			text := s.Text()
			if output == "markdown" {
				text, _ = s.MarkdownWithin(maxSize, fullFile)
			}
			if fullFile != "" {
				uncut := s.Text()
				if output == "markdown" {
					uncut = s.Markdown()
				}
				if err := writeGuarded(fullFile, uncut); err != nil {
					return err
				}
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
			return review.RenderFailures(review.FailedSide{Root: args[0], Failed: oldFailed}, review.FailedSide{Root: args[1], Failed: curFailed})
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "text, or markdown for a PR comment")
	completeValues(c, "output", "text", "markdown")
	c.Flags().IntVar(&maxSize, "max-size", 65536, "with --output markdown: cut the summary to at most this many bytes (0: no limit)")
	c.Flags().StringVar(&fullFile, "full", "", "also write the uncut summary to this file (a CI artifact)")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "runs repositories in a git work tree: also read files git does not track")
	return c
}

// writeGuarded writes text to file through the same per-line guard as
// stdout: the full summary is read in a browser and a CI log too.
func writeGuarded(file, text string) error {
	var b strings.Builder
	w := safetext.Writer(&b)
	if _, err := fmt.Fprint(w, text); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("--full: %w", err)
	}
	return nil
}
