// Package interp resolves OmegaConf-style interpolations in a tree: `${a.b}`,
// relative `${.x}` / `${..x}`, resolver calls `${name:arg,...}` and the escape
// `\${X}` that yields a literal `${X}` (how entrypoints keep shell variables
// for the pod). The rules follow docs/nrl-k8s.md §2.5.
package interp

import (
	"fmt"
	"strings"
)

// part is one piece of a parsed string: literal text, a node reference or a
// resolver call. Node paths and arguments may themselves hold interpolations.
type part struct {
	text     string   // literal (kind litPart)
	raw      string   // interpolation: its source text, `${...}`
	kind     partKind //
	path     []part   // node reference: the path text, possibly interpolated
	resolver string   // resolver call: its name
	args     []arg    // resolver call: its arguments
}

type partKind int

const (
	litPart partKind = iota
	nodePart
	callPart
)

// arg is one resolver argument: a sequence of parts plus whether it was a
// quoted string (quoted arguments are always strings).
type arg struct {
	parts  []part
	quoted bool
}

// maxNesting bounds `${a.${b.${c}}}` chains so hostile input cannot recurse
// without end.
const maxNesting = 64

type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

// HasInterpolation reports whether s would be parsed as an interpolation
// string (it contains `${`).
func HasInterpolation(s string) bool { return strings.Contains(s, "${") }

// parseTop parses a whole string value.
func parseTop(s string) ([]part, error) {
	p := &parser{s: s}
	parts, err := p.parseSeq(0, "")
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.s) {
		return nil, &syntaxError{fmt.Sprintf("unexpected %q at offset %d", p.s[p.pos], p.pos)}
	}
	return parts, nil
}

type parser struct {
	s   string
	pos int
}

// parseSeq reads literal text and interpolations until one of the stop bytes
// (at nesting depth > 0) or the end of input.
func (p *parser) parseSeq(depth int, stops string) ([]part, error) {
	var parts []part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, part{kind: litPart, text: lit.String()})
			lit.Reset()
		}
	}
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if stops != "" && strings.IndexByte(stops, c) >= 0 {
			break
		}
		if c == '\\' {
			// A run of backslashes before `${`: pairs become one backslash,
			// an odd one escapes the interpolation. Elsewhere backslashes
			// are kept verbatim.
			n := 0
			for p.pos+n < len(p.s) && p.s[p.pos+n] == '\\' {
				n++
			}
			if strings.HasPrefix(p.s[p.pos+n:], "${") {
				lit.WriteString(strings.Repeat(`\`, n/2))
				p.pos += n
				if n%2 == 1 {
					lit.WriteString("${")
					p.pos += 2
				}
				continue
			}
			lit.WriteString(p.s[p.pos : p.pos+n])
			p.pos += n
			continue
		}
		if strings.HasPrefix(p.s[p.pos:], "${") {
			flush()
			start := p.pos
			inter, err := p.parseInterpolation(depth + 1)
			if err != nil {
				return nil, err
			}
			inter.raw = p.s[start:p.pos]
			parts = append(parts, inter)
			continue
		}
		lit.WriteByte(c)
		p.pos++
	}
	flush()
	return parts, nil
}

func isNameByte(c byte, first bool) bool {
	if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
		return true
	}
	return !first && (c >= '0' && c <= '9' || c == '.' || c == '-')
}

// parseInterpolation reads `${...}` starting at p.pos.
func (p *parser) parseInterpolation(depth int) (part, error) {
	if depth > maxNesting {
		return part{}, &syntaxError{"interpolations nested too deeply"}
	}
	start := p.pos
	p.pos += 2 // ${
	// Resolver call: a name followed by ':'.
	i := p.pos
	for i < len(p.s) && isNameByte(p.s[i], i == p.pos) {
		i++
	}
	if i > p.pos && i < len(p.s) && p.s[i] == ':' {
		name := p.s[p.pos:i]
		p.pos = i + 1
		args, err := p.parseArgs(depth)
		if err != nil {
			return part{}, err
		}
		return part{kind: callPart, resolver: name, args: args}, nil
	}
	path, err := p.parseSeq(depth, "}")
	if err != nil {
		return part{}, err
	}
	if p.pos >= len(p.s) || p.s[p.pos] != '}' {
		return part{}, &syntaxError{fmt.Sprintf("unclosed interpolation starting at offset %d", start)}
	}
	p.pos++
	if len(path) == 0 {
		return part{}, &syntaxError{"empty interpolation `${}`"}
	}
	return part{kind: nodePart, path: path}, nil
}

// parseArgs reads comma-separated resolver arguments up to the closing '}'.
func (p *parser) parseArgs(depth int) ([]arg, error) {
	var args []arg
	for {
		skipSpace(p)
		if p.pos >= len(p.s) {
			return nil, &syntaxError{"unclosed resolver call"}
		}
		if p.s[p.pos] == '}' && len(args) == 0 {
			p.pos++
			return nil, nil
		}
		var a arg
		if c := p.s[p.pos]; c == '\'' || c == '"' {
			parts, err := p.parseQuoted(depth, c)
			if err != nil {
				return nil, err
			}
			a = arg{parts: parts, quoted: true}
			skipSpace(p)
		} else {
			parts, err := p.parseSeq(depth, ",}")
			if err != nil {
				return nil, err
			}
			a = arg{parts: trimParts(parts)}
		}
		args = append(args, a)
		if p.pos >= len(p.s) {
			return nil, &syntaxError{"unclosed resolver call"}
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return args, nil
		default:
			return nil, &syntaxError{fmt.Sprintf("unexpected %q in resolver arguments", p.s[p.pos])}
		}
	}
}

func (p *parser) parseQuoted(depth int, q byte) ([]part, error) {
	p.pos++ // opening quote
	var parts []part
	var lit strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			if lit.Len() > 0 {
				parts = append(parts, part{kind: litPart, text: lit.String()})
			}
			if len(parts) == 0 {
				parts = []part{{kind: litPart, text: ""}}
			}
			return parts, nil
		case c == '\\' && p.pos+1 < len(p.s) && (p.s[p.pos+1] == q || p.s[p.pos+1] == '\\'):
			lit.WriteByte(p.s[p.pos+1])
			p.pos += 2
		case strings.HasPrefix(p.s[p.pos:], "${"):
			if lit.Len() > 0 {
				parts = append(parts, part{kind: litPart, text: lit.String()})
				lit.Reset()
			}
			inter, err := p.parseInterpolation(depth + 1)
			if err != nil {
				return nil, err
			}
			parts = append(parts, inter)
		default:
			lit.WriteByte(c)
			p.pos++
		}
	}
	return nil, &syntaxError{"unterminated quoted resolver argument"}
}

func skipSpace(p *parser) {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// trimParts strips the whitespace around an unquoted argument.
func trimParts(parts []part) []part {
	if len(parts) == 0 {
		return parts
	}
	if parts[0].kind == litPart {
		parts[0].text = strings.TrimLeft(parts[0].text, " \t")
	}
	last := len(parts) - 1
	if parts[last].kind == litPart {
		parts[last].text = strings.TrimRight(parts[last].text, " \t")
	}
	out := parts[:0]
	for _, pt := range parts {
		if pt.kind == litPart && pt.text == "" {
			continue
		}
		out = append(out, pt)
	}
	return out
}
