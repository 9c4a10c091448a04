// Package entrypoint reads a profile's shell entrypoint as the pod's shell
// will run it, for what nrl-k8s does to it: the NeMo-RL driver calls it
// makes (script, --config, Hydra overrides, pipes, whether another layer
// reads the call first), the run's overrides appended to the first call,
// every --config pointed at the checked recipe, and whether pipefail is on.
package entrypoint

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

// Invocation is one NeMo-RL driver call found in an entrypoint script.
type Invocation struct {
	Script    string   // e.g. examples/run_grpo.py
	Config    string   // value of --config, if any (quotes removed)
	Overrides []string // Hydra overrides, in order
	Line      int      // 1-based line where the call's (continued) line starts
	// Piped: the call's output goes into a pipe (`| tee log`), so without
	// `set -o pipefail` its exit status is lost.
	Piped bool
	// PipefailOn: a `set` command before the call's line turns pipefail on
	// (`set -o pipefail`, `set -euo pipefail`), so that a piped driver's
	// failure is the pipeline's exit status.
	PipefailOn bool
	// Wrapped says, when not "", that the call is not a command of the
	// entrypoint's own shell but text another layer evaluates: inside a
	// quoted string spanning lines (`bash -c "..."`), an unquoted heredoc's
	// body, or a quoted word. Quoting an override for the entrypoint's
	// shell does not make it one literal word there (see AppendOverrides).
	Wrapped string

	// config is the --config word (the value word, or the `--config=v`
	// word); end is the byte offset where the call's arguments end.
	config  *shell.Token
	eqForm  bool
	end     int
	opStart int // first shell operator or comment after the call, -1 if none
}

var scriptRE = lazyre.New(`(^|/)run_[A-Za-z0-9_]*\.py$`)

// findInvocations returns every training call, in order. A training call is
// a simple command that runs one of NeMo-RL's drivers (a `run_*.py` script)
// or, whatever its script's name, passes `--config` (`python train.py
// --config a/b.yaml`): nrl-k8s rewrites every `--config` of the entrypoint,
// so a recipe path the pod reads is never left unchecked. Backslash-newline
// continuations join lines (as two blanks, so byte offsets stay those of the
// entrypoint).
func findInvocations(entrypoint string) []Invocation {
	joined := shell.JoinContinuations(entrypoint)
	var out []Invocation
	var ctx shell.LineState
	// pipefail[k] is whether pipefail is on after the first k lines.
	pipefail := []bool{false}
	lineStart := 0
	for lineStart <= len(joined) {
		lineEnd := strings.IndexByte(joined[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(joined)
		} else {
			lineEnd += lineStart
		}
		lineNo := strings.Count(entrypoint[:lineStart], "\n") + 1
		// Each line is read as the entrypoint's shell would read a fresh
		// line, so a call inside a wrapped string is still found (and its
		// --config rewritten); ctx says whether it is wrapped.
		wrapped := ctx.Wrapped()
		words, comment := shell.Tokenize(joined, lineStart, lineEnd)
		ctx.Advance(joined, lineStart, lineEnd, lineNo, words)
		for from := 0; from < len(words); {
			to := shell.CommandEnd(words, from)
			if s, ok := scriptOf(words[from:to]); ok {
				inv := parseCall(words, from+s, comment, lineNo)
				inv.Wrapped = wrapped
				if w := words[from+s]; inv.Wrapped == "" && strings.ContainsAny(w.Text, " \t") {
					inv.Wrapped = "inside the quoted word " + joined[w.Start:w.End]
				}
				out = append(out, inv)
			}
			to++ // past the control operator
			from = to
		}
		pipefail = append(pipefail, setsPipefail(words, pipefail[len(pipefail)-1]))
		lineStart = lineEnd + 1
	}
	for i := range out {
		out[i].PipefailOn = pipefail[min(max(out[i].Line-1, 0), len(pipefail)-1)]
	}
	return out
}

// setsPipefail is whether pipefail is on after a line's words, given
// whether it was on before: `set -o pipefail` (any `-...o` flag group)
// turns it on, `set +o pipefail` off again.
func setsPipefail(words []shell.Token, on bool) bool {
	for j := 0; j < len(words); j++ {
		if words[j].Op || words[j].Text != "set" {
			continue
		}
		for k := j + 1; k < len(words) && !words[k].Op; k++ {
			w := words[k].Text
			if len(w) > 1 && (w[0] == '-' || w[0] == '+') && strings.HasSuffix(w, "o") && k+1 < len(words) && words[k+1].Text == "pipefail" {
				on = w[0] == '-'
			}
		}
	}
	return on
}

// scriptOf finds the word a training call's arguments follow in one simple
// command: a NeMo-RL driver (`run_*.py`), else, when the command passes
// --config, the last `.py` word before it, else the command's program.
func scriptOf(cmd []shell.Token) (int, bool) {
	for i, w := range cmd {
		if w.Op {
			break
		}
		if scriptRE().MatchString(w.Text) {
			return i, true
		}
	}
	cfg := -1
	for i, w := range cmd {
		if w.Op {
			break
		}
		if isConfigFlag(w.Text) {
			cfg = i
			break
		}
	}
	if cfg < 0 {
		return 0, false
	}
	for i := cfg - 1; i >= 0; i-- {
		if strings.HasSuffix(cmd[i].Text, ".py") {
			return i, true
		}
	}
	for i := 0; i < cfg; i++ {
		// The program: the first word that is no `VAR=value` assignment.
		if !strings.Contains(cmd[i].Text, "=") {
			return i, true
		}
	}
	return cfg, true // `--config x` alone: the flag is the call
}

// isConfigFlag: `--config` or `--config=...`, never Hydra's `--config-name`,
// `--config-dir` or `--config-path`.
func isConfigFlag(w string) bool {
	return w == "--config" || strings.HasPrefix(w, "--config=")
}

// parseCall reads the call whose script is words[s]: --config, Hydra
// overrides up to the first operator, and whether a pipe takes its output.
func parseCall(words []shell.Token, s, comment, line int) Invocation {
	w := words[s]
	inv := Invocation{Script: w.Text, Line: line, end: w.End, opStart: comment}
	j := s + 1
	if isConfigFlag(w.Text) {
		// A command that is only `--config x`: the flag word is its own.
		inv.Script, j = "", s
	}
	for ; j < len(words); j++ {
		a := words[j]
		if a.Op {
			inv.opStart = a.Start
			break
		}
		inv.end = a.End
		switch {
		case a.Text == "--config" && j+1 < len(words) && !words[j+1].Op:
			j++
			inv.config = &words[j]
			inv.Config = words[j].Text
			inv.end = words[j].End
			continue
		case strings.HasPrefix(a.Text, "--config="):
			inv.config = &words[j]
			inv.eqForm = true
			inv.Config = strings.TrimPrefix(a.Text, "--config=")
			continue
		case strings.HasPrefix(a.Text, "-") && !strings.HasPrefix(a.Text, "++"):
			continue
		case strings.Contains(a.Text, "=") || strings.HasPrefix(a.Text, "~"):
			inv.Overrides = append(inv.Overrides, a.Text)
		}
	}
	// Past redirections (`2>&1`, `> file`), a pipe takes the output.
	for k := j; k < len(words); k++ {
		a := words[k]
		if !a.Op {
			continue // a redirection's target
		}
		if a.Text == "|" || a.Text == "|&" {
			inv.Piped = true
		}
		if !shell.IsRedirection(a.Text) {
			break
		}
	}
	return inv
}

// Script is an entrypoint read once: its text and its driver calls, which
// every reader of a render (the effective recipe, the pod's --config, the
// checks) takes from here instead of reading the text again.
type Script struct {
	Text  string
	Calls []Invocation
}

// parses counts Parse calls (Parses).
var parses atomic.Int64

// Parse reads an entrypoint's driver calls: the one read of an entrypoint's
// text, whose Script every later step takes.
func Parse(text string) Script {
	parses.Add(1)
	return Script{Text: text, Calls: findInvocations(text)}
}

// Parses is how many entrypoints this process has read, so that a test can
// hold a render to one read of its entrypoint.
func Parses() int64 { return parses.Load() }

// First is the first training call, false when there is none.
func (s Script) First() (Invocation, bool) {
	if len(s.Calls) == 0 {
		return Invocation{}, false
	}
	return s.Calls[0], true
}

// ForRun is the entrypoint the run's pods execute: every driver call's
// --config pointed at config (RewriteConfig; none when config is ""), then
// the run's overrides appended to the first call (AppendOverrides), both
// from this one read of the text.
func (s Script) ForRun(config string, extra []hydra.Override) (string, error) {
	var edits []splice
	if config != "" {
		sp, _, err := s.configSplices(config)
		if err != nil {
			return "", err
		}
		edits = sp
	}
	if len(extra) > 0 {
		raw := make([]string, len(extra))
		for i, o := range extra {
			raw[i] = o.Raw
		}
		ins, err := s.overrideSplice(raw)
		if err != nil {
			return "", err
		}
		// After the first call's own --config, before any later call's.
		at := sort.Search(len(edits), func(i int) bool { return edits[i].start >= ins.end })
		edits = append(edits[:at], append([]splice{ins}, edits[at:]...)...)
	}
	return s.apply(edits), nil
}

// AppendOverrides adds extra overrides, already parsed, to the end of the
// first NeMo-RL driver call in a shell entrypoint, before any pipe or
// redirection, so that they win over the entrypoint's own (Hydra applies
// overrides left to right).
func (s Script) AppendOverrides(extra []hydra.Override) (string, error) {
	return s.ForRun("", extra)
}

// splice replaces Text[start:end] with text (an insertion when start ==
// end). Splices are made on the text as read, so edits never need a second
// read of an edited text.
type splice struct {
	start, end int
	text       string
}

// apply makes the splices, given in text order and not overlapping, on the
// script's text.
func (s Script) apply(edits []splice) string {
	if len(edits) == 0 {
		return s.Text
	}
	var out strings.Builder
	last := 0
	for _, e := range edits {
		out.WriteString(s.Text[last:e.start])
		out.WriteString(e.text)
		last = e.end
	}
	out.WriteString(s.Text[last:])
	return out.String()
}

// overrideSplice is the insertion of extra (raw overrides) after the first
// driver call's arguments.
func (s Script) overrideSplice(extra []string) (splice, error) {
	entrypoint := s.Text
	inv, ok := s.First()
	if !ok {
		return splice{}, errors.New("the entrypoint runs no NeMo-RL driver (python ... run_*.py) to append overrides to")
	}
	if strings.ContainsAny(inv.Script, " \t") {
		return splice{}, fmt.Errorf("line %d: the driver call is %s; an override appended after that word would be an argument of the outer command, not of the driver: refused. Call the driver directly on a line of the entrypoint", inv.Line, inv.Wrapped)
	}
	if inv.Wrapped != "" {
		// Quoting for the entrypoint's shell is what keeps an override one
		// literal word; in a wrapped call another layer reads the text
		// first. Only overrides that need no quoting at all are the same
		// word in every context.
		for _, o := range extra {
			if !shell.IsSafe(o) {
				return splice{}, fmt.Errorf("line %d: the driver call is %s; override %q needs shell quoting, which does not hold there, so it could run as a command in the pod: refused. Give the value in the recipe or profile, or call the driver directly on a line of the entrypoint", inv.Line, inv.Wrapped, o)
			}
		}
	}
	quoted := make([]string, len(extra))
	for i, o := range extra {
		quoted[i] = shell.Quote(o)
	}
	ins := strings.Join(quoted, " ")
	// The insertion leaves the rest of the entrypoint byte for byte as it
	// was, so removing it restores the original exactly (the chart relies on
	// that): `OVR ` before an operator or comment, ` OVR` otherwise.
	// A --config rewrite never ends in a blank, so the byte before the
	// operator says the same of the text as read and of the rewritten one.
	if at := inv.opStart; at >= 0 {
		if at > 0 && entrypoint[at-1] != ' ' && entrypoint[at-1] != '\t' {
			return splice{at, at, " " + ins}, nil
		}
		return splice{at, at, ins + " "}, nil
	}
	return splice{inv.end, inv.end, " " + ins}, nil
}

// ConfigRewrite is one --config value changed by RewriteConfig.
type ConfigRewrite struct {
	Line     int
	From, To string
}

// RewriteConfig points the --config of every driver call at path, keeping
// each call's form (`--config a.yaml`, `--config=a.yaml`, single or double
// quotes), as nrl-k8s does in long-lived mode. A value the pod's shell
// expands (`$RECIPE`) is refused: what it names is only known in the pod.
func (s Script) RewriteConfig(path string) (string, []ConfigRewrite, error) {
	edits, changes, err := s.configSplices(path)
	if err != nil {
		return "", nil, err
	}
	return s.apply(edits), changes, nil
}

// configSplices are RewriteConfig's edits, in text order.
func (s Script) configSplices(path string) ([]splice, []ConfigRewrite, error) {
	entrypoint := s.Text
	var edits []splice
	var changes []ConfigRewrite
	for _, inv := range s.Calls {
		if inv.config == nil {
			continue
		}
		raw := entrypoint[inv.config.Start:inv.config.End]
		prefix := ""
		if inv.eqForm {
			if strings.HasPrefix(raw, "--config=") {
				prefix, raw = "--config=", raw[len("--config="):]
			} else {
				// The whole word is quoted: `"--config=a.yaml"`.
				prefix = "--config="
				raw = raw[:1] + raw[1+len("--config="):]
			}
		}
		if strings.ContainsAny(raw, "$`") && !strings.HasPrefix(raw, "'") {
			return nil, nil, fmt.Errorf("line %d: --config %s is expanded by the shell in the pod; expected a literal path so that the checked recipe (%s) is the one that runs", inv.Line, raw, path)
		}
		if inv.Config == path {
			continue
		}
		repl := prefix + shell.QuoteLike(raw, path)
		if inv.eqForm && !strings.HasPrefix(entrypoint[inv.config.Start:], "--config=") {
			q := entrypoint[inv.config.Start : inv.config.Start+1]
			repl = shell.QuoteLike(q, "--config="+path)
		}
		edits = append(edits, splice{inv.config.Start, inv.config.End, repl})
		changes = append(changes, ConfigRewrite{Line: inv.Line, From: inv.Config, To: path})
	}
	return edits, changes, nil
}
