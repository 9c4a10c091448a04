// Package shell reads POSIX shell text the way the entrypoint's shell will:
// words and operators with their byte spans (quotes, escapes, comments,
// redirections), what a line starts inside (an open quote, a heredoc's
// body), and quoting a word so that the shell reads it back unchanged.
// It knows nothing of NeMo-RL; fn/engine/resolve/entrypoint reads driver
// calls with it.
package shell

import (
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// JoinContinuations joins backslash-newline continuations as two blanks, so
// byte offsets stay those of s.
func JoinContinuations(s string) string { return strings.ReplaceAll(s, "\\\n", "  ") }

// Token is one shell word or operator, with its byte span in the script.
type Token struct {
	Text       string // the word as the shell sees it (quotes removed)
	Start, End int    // span of the raw text in the script
	Op         bool   // a control operator or a redirection
}

// CommandEnd is the index of the control operator (`;`, `&&`, `||`, `|`,
// `|&`, `&`) that ends the simple command starting at from, or len(words).
// Redirections belong to their command.
func CommandEnd(words []Token, from int) int {
	for i := from; i < len(words); i++ {
		if words[i].Op && !IsRedirection(words[i].Text) {
			return i
		}
	}
	return len(words)
}

// IsRedirection reports whether a control token is a redirection (`>`, `2>&1`, `<<`).
func IsRedirection(op string) bool {
	return strings.ContainsAny(op, "<>")
}

// Tokenize splits s[from:to] into words and operators, honouring single and
// double quotes and backslash escapes. It returns the offset of a comment
// (`#` at the start of a word), or -1. This is the repository's one shell
// tokenizer: finding driver calls, appending overrides, rewriting --config
// and the pipe check (fn/engine/resolve/entrypoint) all read its words.
func Tokenize(s string, from, to int) ([]Token, int) {
	words, comment, _ := TokenizeFrom(s, from, to, 0)
	return words, comment
}

// TokenizeFrom is Tokenize starting inside the quote quote (0 for none),
// as a line continuing a string opened on an earlier line; it also returns
// the quote still open at to (0 when none, or after a comment).
func TokenizeFrom(s string, from, to int, quote byte) ([]Token, int, byte) {
	var words []Token
	var b strings.Builder
	start := -1
	if quote != 0 {
		start = from
	}
	flush := func(end int) {
		if start >= 0 {
			words = append(words, Token{Text: b.String(), Start: start, End: end})
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
			words = append(words, Token{Text: s[i : i+n], Start: i, End: i + n, Op: true})
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
			words = append(words, Token{Text: s[opStart:j], Start: opStart, End: j, Op: true})
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

// LineState follows, line by line, what the entrypoint's shell is in at
// the start of the next line: a quoted string left open (a `bash -c "`
// whose script spans lines) or a heredoc's body.
type LineState struct {
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

// Wrapped is why a line starting in this state is wrapped, "" when the
// entrypoint's own shell reads it as commands. A literal heredoc's body is
// handed on unexpanded, to a shell that quotes as the entrypoint's does.
func (w *LineState) Wrapped() string {
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

// Advance moves the state past the line s[from:to]; words are the line's
// words read fresh (for heredoc operators).
func (w *LineState) Advance(s string, from, to, line int, words []Token) {
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
		_, _, w.quote = TokenizeFrom(s, from, to, w.quote)
		return
	}
	for i := 0; i+1 < len(words); i++ {
		if !words[i].Op || words[i].Text != "<<" || words[i+1].Op {
			continue
		}
		d := words[i+1]
		h := heredoc{delim: d.Text, line: line, literal: strings.ContainsAny(s[d.Start:d.End], "'\"\\")}
		if strings.HasPrefix(h.delim, "-") {
			h.stripTab, h.delim = true, h.delim[1:]
		}
		w.heredocs = append(w.heredocs, h)
	}
	_, _, q := TokenizeFrom(s, from, to, 0)
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

// QuoteLike quotes s the way raw was quoted, when that quoting can hold s.
func QuoteLike(raw, s string) string {
	switch {
	case strings.HasPrefix(raw, "'") && !strings.Contains(s, "'"):
		return "'" + s + "'"
	case strings.HasPrefix(raw, `"`) && !strings.ContainsAny(s, "\"$`\\"):
		return `"` + s + `"`
	}
	return Quote(s)
}

// SafePattern is what Quote leaves unquoted (Python's
// shlex.quote); the Helm chart's schema uses it too.
const SafePattern = `^[A-Za-z0-9_@%+=:,./-]+$`

var safeShellRE = lazyre.New(SafePattern)

// IsSafe reports whether Quote leaves s as it is: the same word for every
// shell that reads it.
func IsSafe(s string) bool { return safeShellRE().MatchString(s) }

// Quote quotes s for a POSIX shell the way Python's shlex.quote does.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if safeShellRE().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
