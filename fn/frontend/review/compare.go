package review

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// CompareOptions is one `nrl-k8s diff`: what to compare and how to print it.
type CompareOptions struct {
	// Old and New are each a render file, a tree, a runs repository, or
	// "-" (Stdin).
	Old, New  string
	Untracked bool
	Stdin     io.Reader
	// Markdown prints a pull-request comment cut to MaxSize bytes (0: no
	// limit); Full, when set, names the file the uncut summary goes to.
	Markdown bool
	MaxSize  int
	Full     string
}

// Compared is what `diff` prints: Text, and Failures, the runs that did
// not render on either side (summarised without them; the command then
// fails).
type Compared struct {
	Text     string
	Failures error
}

// Compare reads both sides and summarises them, writing the uncut summary
// to Full when set. A run that fails on either side is in neither; two
// files are two versions of one run, named after New.
func Compare(o CompareOptions) (Compared, error) {
	old, oldFile, oldFailed, err := ReadRender(o.Old, o.Untracked, o.Stdin)
	if err != nil {
		return Compared{}, err
	}
	cur, curFile, curFailed, err := ReadRender(o.New, o.Untracked, o.Stdin)
	if err != nil {
		return Compared{}, err
	}
	for _, f := range []map[string][]string{oldFailed, curFailed} {
		for name := range f {
			delete(old, name)
			delete(cur, name)
		}
	}
	if oldFile && curFile {
		before, after := OnlyRun(old), OnlyRun(cur)
		before.Name = after.Name
		old = Render{after.Name: before}
	}
	s := Diff(old, cur)
	var out Compared
	uncut := ""
	switch {
	case o.Markdown:
		out.Text, _ = s.MarkdownWithin(o.MaxSize, o.Full)
		if o.Full != "" {
			uncut = s.Markdown()
		}
	default:
		out.Text = s.Text()
		uncut = out.Text
	}
	if o.Full != "" {
		if err := writeGuarded(o.Full, uncut); err != nil {
			return Compared{}, err
		}
	}
	out.Failures = RenderFailures(FailedSide{Root: o.Old, Failed: oldFailed}, FailedSide{Root: o.New, Failed: curFailed})
	return out, nil
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
