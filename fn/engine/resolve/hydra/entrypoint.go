package hydra

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
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
	// Wrapped says, when not "", that the call is not a command of the
	// entrypoint's own shell but text another layer evaluates: inside a
	// quoted string spanning lines (`bash -c "..."`), an unquoted heredoc's
	// body, or a quoted word. Quoting an override for the entrypoint's
	// shell does not make it one literal word there (see AppendOverrides).
	Wrapped string

	// config is the --config word (the value word, or the `--config=v`
	// word); end is the byte offset where the call's arguments end.
	config  *token
	eqForm  bool
	end     int
	opStart int // first shell operator or comment after the call, -1 if none
}

// token is one shell word or operator, with its byte span in the entrypoint.
type token struct {
	text       string // the word as the shell sees it (quotes removed)
	start, end int    // span of the raw text in the entrypoint
	op         bool   // a control operator or a redirection
}

var scriptRE = regexp.MustCompile(`(^|/)run_[A-Za-z0-9_]*\.py$`)

// FindInvocation returns the first training call of a shell entrypoint,
// false when it has none.
func FindInvocation(entrypoint string) (Invocation, bool) {
	all := FindInvocations(entrypoint)
	if len(all) == 0 {
		return Invocation{}, false
	}
	return all[0], true
}

// FindInvocations returns every training call, in order. A training call is
// a simple command that runs one of NeMo-RL's drivers (a `run_*.py` script)
// or, whatever its script's name, passes `--config` (`python train.py
// --config a/b.yaml`): nrl-k8s rewrites every `--config` of the entrypoint,
// so a recipe path the pod reads is never left unchecked. Backslash-newline
// continuations join lines (as two blanks, so byte offsets stay those of the
// entrypoint).
func FindInvocations(entrypoint string) []Invocation {
	joined := strings.ReplaceAll(entrypoint, "\\\n", "  ")
	var out []Invocation
	var ctx wrapState
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
		wrapped := ctx.describe()
		words, comment := tokenize(joined, lineStart, lineEnd)
		ctx.advance(joined, lineStart, lineEnd, lineNo, words)
		for from := 0; from < len(words); {
			to := commandEnd(words, from)
			if s, ok := scriptOf(words[from:to]); ok {
				inv := parseCall(words, from+s, comment, lineNo)
				inv.Wrapped = wrapped
				if w := words[from+s]; inv.Wrapped == "" && strings.ContainsAny(w.text, " \t") {
					inv.Wrapped = "inside the quoted word " + joined[w.start:w.end]
				}
				out = append(out, inv)
			}
			to++ // past the control operator
			from = to
		}
		lineStart = lineEnd + 1
	}
	return out
}

// commandEnd is the index of the control operator (`;`, `&&`, `||`, `|`,
// `|&`, `&`) that ends the simple command starting at from, or len(words).
// Redirections belong to their command.
func commandEnd(words []token, from int) int {
	for i := from; i < len(words); i++ {
		if words[i].op && !isRedirection(words[i].text) {
			return i
		}
	}
	return len(words)
}

// scriptOf finds the word a training call's arguments follow in one simple
// command: a NeMo-RL driver (`run_*.py`), else, when the command passes
// --config, the last `.py` word before it, else the command's program.
func scriptOf(cmd []token) (int, bool) {
	for i, w := range cmd {
		if w.op {
			break
		}
		if scriptRE.MatchString(w.text) {
			return i, true
		}
	}
	cfg := -1
	for i, w := range cmd {
		if w.op {
			break
		}
		if isConfigFlag(w.text) {
			cfg = i
			break
		}
	}
	if cfg < 0 {
		return 0, false
	}
	for i := cfg - 1; i >= 0; i-- {
		if strings.HasSuffix(cmd[i].text, ".py") {
			return i, true
		}
	}
	for i := 0; i < cfg; i++ {
		// The program: the first word that is no `VAR=value` assignment.
		if !strings.Contains(cmd[i].text, "=") {
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
func parseCall(words []token, s, comment, line int) Invocation {
	w := words[s]
	inv := Invocation{Script: w.text, Line: line, end: w.end, opStart: comment}
	j := s + 1
	if isConfigFlag(w.text) {
		// A command that is only `--config x`: the flag word is its own.
		inv.Script, j = "", s
	}
	for ; j < len(words); j++ {
		a := words[j]
		if a.op {
			inv.opStart = a.start
			break
		}
		inv.end = a.end
		switch {
		case a.text == "--config" && j+1 < len(words) && !words[j+1].op:
			j++
			inv.config = &words[j]
			inv.Config = words[j].text
			inv.end = words[j].end
			continue
		case strings.HasPrefix(a.text, "--config="):
			inv.config = &words[j]
			inv.eqForm = true
			inv.Config = strings.TrimPrefix(a.text, "--config=")
			continue
		case strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "++"):
			continue
		case strings.Contains(a.text, "=") || strings.HasPrefix(a.text, "~"):
			inv.Overrides = append(inv.Overrides, a.text)
		}
	}
	// Past redirections (`2>&1`, `> file`), a pipe takes the output.
	for k := j; k < len(words); k++ {
		a := words[k]
		if !a.op {
			continue // a redirection's target
		}
		if a.text == "|" || a.text == "|&" {
			inv.Piped = true
		}
		if !isRedirection(a.text) {
			break
		}
	}
	return inv
}

// PipefailBefore reports whether a `set` command before the call's line
// turns on pipefail (`set -o pipefail`, `set -euo pipefail`), so that a
// piped driver's failure is the pipeline's exit status.
func PipefailBefore(entrypoint string, inv Invocation) bool {
	joined := strings.ReplaceAll(entrypoint, "\\\n", "  ")
	lines := strings.Split(joined, "\n")
	offset, on := 0, false
	for i, l := range lines {
		if i+1 >= inv.Line {
			break
		}
		words, _ := tokenize(joined, offset, offset+len(l))
		offset += len(l) + 1
		for j := 0; j < len(words); j++ {
			if words[j].op || words[j].text != "set" {
				continue
			}
			for k := j + 1; k < len(words) && !words[k].op; k++ {
				w := words[k].text
				if len(w) > 1 && (w[0] == '-' || w[0] == '+') && strings.HasSuffix(w, "o") && k+1 < len(words) && words[k+1].text == "pipefail" {
					on = w[0] == '-' // `set +o pipefail` turns it off again
				}
			}
		}
	}
	return on
}

func isRedirection(op string) bool {
	return strings.ContainsAny(op, "<>")
}

// tokenize splits s[from:to] into words and operators, honouring single and
// double quotes and backslash escapes. It returns the offset of a comment
// (`#` at the start of a word), or -1. This is the package's one shell
// tokenizer: finding driver calls, appending overrides, rewriting --config
// and the pipe check all read its words.
func tokenize(s string, from, to int) ([]token, int) {
	words, comment, _ := tokenizeFrom(s, from, to, 0)
	return words, comment
}

// tokenizeFrom is tokenize starting inside the quote quote (0 for none),
// as a line continuing a string opened on an earlier line; it also returns
// the quote still open at to (0 when none, or after a comment).
func tokenizeFrom(s string, from, to int, quote byte) ([]token, int, byte) {
	var words []token
	var b strings.Builder
	start := -1
	if quote != 0 {
		start = from
	}
	flush := func(end int) {
		if start >= 0 {
			words = append(words, token{text: b.String(), start: start, end: end})
			b.Reset()
			start = -1
		}
	}
	for i := from; i < to; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < to {
				i++
				b.WriteByte(s[i])
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			if start < 0 {
				start = i
			}
			quote = c
		case c == '\\' && i+1 < to:
			if start < 0 {
				start = i
			}
			i++
			b.WriteByte(s[i])
		case c == ' ' || c == '\t':
			flush(i)
		case c == '#' && start < 0:
			return words, i, 0
		case c == '|' || c == ';' || c == '&':
			flush(i)
			n := 1
			if i+1 < to && (s[i+1] == c || (c == '|' && s[i+1] == '&')) {
				n = 2
			}
			words = append(words, token{text: s[i : i+n], start: i, end: i + n, op: true})
			i += n - 1
		case c == '<' || c == '>':
			// A redirection, with its file descriptor if the word so far is
			// all digits (`2>&1`, `1>log`).
			opStart := i
			if start >= 0 && isDigits(s[start:i]) {
				opStart = start
				b.Reset()
				start = -1
			}
			flush(i)
			j := i + 1
			for j < to && (s[j] == '<' || s[j] == '>' || s[j] == '|') {
				j++
			}
			if j < to && s[j] == '&' {
				j++
				for j < to && (s[j] == '-' || (s[j] >= '0' && s[j] <= '9')) {
					j++
				}
			}
			words = append(words, token{text: s[opStart:j], start: opStart, end: j, op: true})
			i = j - 1
		default:
			if start < 0 {
				start = i
			}
			b.WriteByte(c)
		}
	}
	flush(to)
	return words, -1, quote
}

// wrapState follows, line by line, what the entrypoint's shell is in at
// the start of the next line: a quoted string left open (a `bash -c "`
// whose script spans lines) or a heredoc's body.
type wrapState struct {
	quote     byte
	quoteLine int
	// heredocs waiting for their body, in order; the first is the current
	// body when inBody.
	heredocs []heredoc
	inBody   bool
}

type heredoc struct {
	delim    string
	stripTab bool // <<-
	literal  bool // a quoted delimiter: the body is not expanded
	line     int
}

// describe is why a line starting in this state is wrapped, "" when the
// entrypoint's own shell reads it as commands. A literal heredoc's body is
// handed on unexpanded, to a shell that quotes as the entrypoint's does.
func (w *wrapState) describe() string {
	switch {
	case w.inBody && !w.heredocs[0].literal:
		return fmt.Sprintf("inside the heredoc opened on line %d (<<%s): its body is expanded ($(...), backticks, $VAR) before the inner command reads it", w.heredocs[0].line, w.heredocs[0].delim)
	case w.inBody:
		return ""
	case w.quote == '"':
		return fmt.Sprintf("inside the double-quoted string opened on line %d (as in bash -c \"...\"): the outer shell expands $(...), backticks and $VAR in it, single quotes included", w.quoteLine)
	case w.quote == '\'':
		return fmt.Sprintf("inside the single-quoted string opened on line %d (as in bash -c '...'): a quote in an override would end that string", w.quoteLine)
	}
	return ""
}

// advance moves the state past the line s[from:to]; words are the line's
// words read fresh (for heredoc operators).
func (w *wrapState) advance(s string, from, to, line int, words []token) {
	if w.inBody {
		h := w.heredocs[0]
		text := s[from:to]
		if h.stripTab {
			text = strings.TrimLeft(text, "\t")
		}
		if text == h.delim {
			w.heredocs = w.heredocs[1:]
			w.inBody = len(w.heredocs) > 0
		}
		return
	}
	if w.quote != 0 {
		_, _, w.quote = tokenizeFrom(s, from, to, w.quote)
		return
	}
	for i := 0; i+1 < len(words); i++ {
		if !words[i].op || words[i].text != "<<" || words[i+1].op {
			continue
		}
		d := words[i+1]
		h := heredoc{delim: d.text, line: line, literal: strings.ContainsAny(s[d.start:d.end], "'\"\\")}
		if strings.HasPrefix(h.delim, "-") {
			h.stripTab, h.delim = true, h.delim[1:]
		}
		w.heredocs = append(w.heredocs, h)
	}
	_, _, q := tokenizeFrom(s, from, to, 0)
	if q != 0 {
		w.quote, w.quoteLine = q, line
	}
	w.inBody = len(w.heredocs) > 0
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AppendOverrides adds extra overrides to the end of the first NeMo-RL
// driver call in a shell entrypoint, before any pipe or redirection, so that
// they win over the entrypoint's own (Hydra applies overrides left to
// right).
func AppendOverrides(entrypoint string, extra []string) (string, error) {
	if len(extra) == 0 {
		return entrypoint, nil
	}
	for _, o := range extra {
		if _, err := Parse(o); err != nil {
			return "", err
		}
	}
	inv, ok := FindInvocation(entrypoint)
	if !ok {
		return "", errors.New("the entrypoint runs no NeMo-RL driver (python ... run_*.py) to append overrides to")
	}
	if strings.ContainsAny(inv.Script, " \t") {
		return "", fmt.Errorf("line %d: the driver call is %s; an override appended after that word would be an argument of the outer command, not of the driver: refused. Call the driver directly on a line of the entrypoint", inv.Line, inv.Wrapped)
	}
	if inv.Wrapped != "" {
		// Quoting for the entrypoint's shell is what keeps an override one
		// literal word; in a wrapped call another layer reads the text
		// first. Only overrides that need no quoting at all are the same
		// word in every context.
		for _, o := range extra {
			if !safeShellRE.MatchString(o) {
				return "", fmt.Errorf("line %d: the driver call is %s; override %q needs shell quoting, which does not hold there, so it could run as a command in the pod: refused. Give the value in the recipe or profile, or call the driver directly on a line of the entrypoint", inv.Line, inv.Wrapped, o)
			}
		}
	}
	quoted := make([]string, len(extra))
	for i, o := range extra {
		quoted[i] = ShellQuote(o)
	}
	ins := strings.Join(quoted, " ")
	// The insertion leaves the rest of the entrypoint byte for byte as it
	// was, so removing it restores the original exactly (the chart relies on
	// that): `OVR ` before an operator or comment, ` OVR` otherwise.
	if at := inv.opStart; at >= 0 {
		if at > 0 && entrypoint[at-1] != ' ' && entrypoint[at-1] != '\t' {
			return entrypoint[:at] + " " + ins + entrypoint[at:], nil
		}
		return entrypoint[:at] + ins + " " + entrypoint[at:], nil
	}
	return entrypoint[:inv.end] + " " + ins + entrypoint[inv.end:], nil
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
func RewriteConfig(entrypoint, path string) (string, []ConfigRewrite, error) {
	var out strings.Builder
	var changes []ConfigRewrite
	last := 0
	for _, inv := range FindInvocations(entrypoint) {
		if inv.config == nil {
			continue
		}
		raw := entrypoint[inv.config.start:inv.config.end]
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
			return "", nil, fmt.Errorf("line %d: --config %s is expanded by the shell in the pod; expected a literal path so that the checked recipe (%s) is the one that runs", inv.Line, raw, path)
		}
		if inv.Config == path {
			continue
		}
		repl := prefix + quoteLike(raw, path)
		if inv.eqForm && !strings.HasPrefix(entrypoint[inv.config.start:], "--config=") {
			q := entrypoint[inv.config.start : inv.config.start+1]
			repl = quoteLike(q, "--config="+path)
		}
		out.WriteString(entrypoint[last:inv.config.start])
		out.WriteString(repl)
		last = inv.config.end
		changes = append(changes, ConfigRewrite{Line: inv.Line, From: inv.Config, To: path})
	}
	if len(changes) == 0 {
		return entrypoint, nil, nil
	}
	out.WriteString(entrypoint[last:])
	return out.String(), changes, nil
}

// quoteLike quotes s the way raw was quoted, when that quoting can hold s.
func quoteLike(raw, s string) string {
	switch {
	case strings.HasPrefix(raw, "'") && !strings.Contains(s, "'"):
		return "'" + s + "'"
	case strings.HasPrefix(raw, `"`) && !strings.ContainsAny(s, "\"$`\\"):
		return `"` + s + `"`
	}
	return ShellQuote(s)
}

// ShellSafePattern is what ShellQuote leaves unquoted (Python's
// shlex.quote); the Helm chart's schema uses it too.
const ShellSafePattern = `^[A-Za-z0-9_@%+=:,./-]+$`

var safeShellRE = regexp.MustCompile(ShellSafePattern)

// ShellQuote quotes s for a POSIX shell the way Python's shlex.quote does.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if safeShellRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
