package cli

import (
	"fmt"

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
			out, err := review.Compare(review.CompareOptions{
				Old: args[0], New: args[1], Untracked: untracked, Stdin: cmd.InOrStdin(),
				Markdown: output == "markdown", MaxSize: maxSize, Full: fullFile,
			})
			if err != nil {
				return err
			}
			// The summary quotes the PR's text (names, images, annotations)
			// and is posted as a PR comment or printed to the CI log: the
			// last guard is per line (fn/support/safetext).
			w := safetext.Writer(cmd.OutOrStdout())
			if _, err := fmt.Fprint(w, out.Text); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			return out.Failures
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "text, or markdown for a PR comment")
	completeValues(c, "output", "text", "markdown")
	c.Flags().IntVar(&maxSize, "max-size", 65536, "with --output markdown: cut the summary to at most this many bytes (0: no limit)")
	c.Flags().StringVar(&fullFile, "full", "", "also write the uncut summary to this file (a CI artifact)")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "runs repositories in a git work tree: also read files git does not track")
	return c
}
