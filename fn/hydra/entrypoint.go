package hydra

import (
	"errors"
	"regexp"
	"strings"
)

// Invocation is the NeMo-RL driver call found in an entrypoint script.
type Invocation struct {
	Script    string   // e.g. examples/run_grpo.py
	Config    string   // value of --config, if any
	Overrides []string // Hydra overrides, in order
	Line      int      // 1-based line of the script name in the entrypoint
}

var scriptRE = regexp.MustCompile(`(^|/)run_[A-Za-z0-9_]*\.py$`)

// FindInvocation looks for `python ... run_*.py [--config X] overrides...`
// in a shell entrypoint. Backslash-newline continuations are joined first.
// It returns false when the entrypoint runs no NeMo-RL driver.
func FindInvocation(entrypoint string) (Invocation, bool) {
	lines := strings.Split(entrypoint, "\n")
	var joined []string
	var starts []int
	cur, start := "", 0
	for i, l := range lines {
		if cur == "" {
			start = i + 1
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		joined = append(joined, cur+l)
		starts = append(starts, start)
		cur = ""
	}
	if cur != "" {
		joined = append(joined, cur)
		starts = append(starts, start)
	}
	for li, l := range joined {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		words := shellWords(l)
		for i, w := range words {
			if !scriptRE.MatchString(w) {
				continue
			}
			inv := Invocation{Script: w, Line: starts[li]}
			for j := i + 1; j < len(words); j++ {
				a := words[j]
				if isShellOperator(a) {
					break
				}
				if a == "--config" && j+1 < len(words) {
					inv.Config = words[j+1]
					j++
					continue
				}
				if strings.HasPrefix(a, "--config=") {
					inv.Config = strings.TrimPrefix(a, "--config=")
					continue
				}
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "++") {
					continue
				}
				if strings.Contains(a, "=") || strings.HasPrefix(a, "~") {
					inv.Overrides = append(inv.Overrides, a)
				}
			}
			return inv, true
		}
	}
	return Invocation{}, false
}

func isShellOperator(w string) bool {
	switch w {
	case "|", "||", "&&", ";", "&", "|&":
		return true
	}
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "1>")
}

// shellWords splits a line into words, honouring single and double quotes
// and backslash escapes; a `#` at the start of a word begins a comment.
func shellWords(line string) []string {
	var words []string
	var b strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(line) {
				i++
				b.WriteByte(line[i])
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			b.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		case c == '|' || c == ';' || c == '&':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
			words = append(words, string(c))
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}

// AppendOverrides adds extra overrides to the end of the NeMo-RL driver call
// in a shell entrypoint, before any pipe or redirection, so that they win
// over the entrypoint's own (Hydra applies overrides left to right).
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
	// The driver call ends on the last line of its backslash continuation.
	lines := strings.Split(entrypoint, "\n")
	last := inv.Line - 1
	for last < len(lines)-1 && strings.HasSuffix(lines[last], `\`) {
		last++
	}
	quoted := make([]string, len(extra))
	for i, o := range extra {
		quoted[i] = ShellQuote(o)
	}
	ins := strings.Join(quoted, " ")
	// The insertion leaves the rest of the line byte for byte as it was, so
	// removing it restores the original entrypoint exactly (the chart relies
	// on that).
	line := lines[last]
	if at := operatorIndex(line); at >= 0 {
		lines[last] = line[:at] + ins + " " + line[at:]
	} else {
		lines[last] = line + " " + ins
	}
	return strings.Join(lines, "\n"), nil
}

// operatorIndex finds the first unquoted pipe, list operator or redirection.
func operatorIndex(line string) int {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == '|' || c == ';' || c == '&' || c == '>' || c == '<':
			j := i
			for j > 0 && line[j-1] >= '0' && line[j-1] <= '9' {
				j--
			}
			if j == 0 || line[j-1] == ' ' || line[j-1] == '\t' {
				return j
			}
			return i
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return i
		}
	}
	return -1
}

var safeShellRE = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

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
