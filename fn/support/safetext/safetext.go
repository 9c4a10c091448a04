// Package safetext is the one place that decides how text a pull request
// controls (names, images, labels, annotations, file names, profile keys,
// overrides) is printed: in a message, a log line, a markdown cell.
//
// A PR's text is data. Printed raw, a newline in an annotation or a file
// name becomes a new line of the CI log or of the PR comment, where a line
// starting `::` is a GitHub Actions workflow command (`::add-mask::`,
// `::stop-commands::`, `::error file=...::`), a line starting `<!--` hides the
// rest of the comment, and an escape sequence rewrites the terminal. So:
//
//   - Inline escapes every control and invisible or formatting character (C0
//     and C1 controls, DEL, line and paragraph separators, bidirectional
//     overrides, zero-width and TAG characters, the soft hyphen, spaces other
//     than U+0020, invalid UTF-8) Go-style (`\n`, `\x1b`, `\u200b`,
//     `\U000e0041`): a value can never leave its line, and what looks alike
//     reads alike only when it is alike.
//   - Line neutralises what the start of a whole output line could trigger
//     (`::`, `<!--`, after any leading blanks, as the runner trims them) and
//     the runner's older `##[` command prefix anywhere, by a backslash.
//   - Writer applies Line to every line written through it; the CLI puts it
//     around the outputs a reviewer and CI read.
package safetext

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inline returns s with every character that could end the line or change
// how the rest of the line displays replaced by a Go escape. Printable text,
// tabs and backslashes included, is unchanged, so an ordinary value reads as itself.
func Inline(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether Inline would return s unchanged (the common case,
// without allocating).
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune: every character that is not visible text or the ordinary
// space: controls, format characters (zero-width spaces and joiners, the
// soft hyphen, bidirectional marks and overrides, Unicode TAG characters,
// byte-order marks), line and paragraph separators, private-use and
// unassigned code points, spaces other than U+0020 (no-break, em, ideographic),
// and the graphic characters that render as nothing (variation selectors,
// the combining grapheme joiner, Hangul fillers). Escaped, two names that
// look alike on screen read differently, and nothing can hide or reorder text.
func unsafeRune(r rune) bool {
	switch {
	case r == '\t', r == ' ':
		return false // blanks: they cannot end a line or hide text
	case r < 0x20, r == 0x7f:
		return true
	case r < utf8.RuneSelf:
		return false
	case unicode.Is(unicode.Zs, r), !unicode.IsGraphic(r):
		return true
	case r == 0x034f, // combining grapheme joiner
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, // variation selectors
		r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, // Hangul fillers
		r == 0x180e: // Mongolian vowel separator
		return true
	}
	return false
}

// Line guards one output line (no newline in it): Inline, then a backslash
// before a leading `::` or `<!--` (after blanks) and inside every `##[`, so
// no line printed from data is a workflow command or opens an HTML comment.
// In markdown the backslash escapes the punctuation and is not shown.
func Line(s string) string {
	s = Inline(s)
	if strings.Contains(s, "##[") {
		s = strings.ReplaceAll(s, "##[", `#\#[`)
	}
	rest := strings.TrimLeft(s, " \t")
	if strings.HasPrefix(rest, "::") || strings.HasPrefix(rest, "<!--") {
		lead := s[:len(s)-len(rest)]
		return lead + `\` + rest
	}
	return s
}

// Lines applies Line to every line of s, keeping s's line breaks.
func Lines(s string) string {
	if !needsGuard(s) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		cr := strings.HasSuffix(p, "\r") // a CRLF line ending stays one
		p = strings.TrimSuffix(p, "\r")
		parts[i] = Line(p)
		if cr {
			parts[i] += "\r"
		}
	}
	return strings.Join(parts, "\n")
}

// needsGuard is a fast pre-check for Lines.
func needsGuard(s string) bool {
	if strings.Contains(s, "::") || strings.Contains(s, "<!--") || strings.Contains(s, "##[") {
		return true
	}
	for _, line := range strings.Split(s, "\n") {
		if !clean(strings.TrimSuffix(line, "\r")) {
			return true
		}
	}
	return false
}

// Error is err's message as one guarded line per line.
func Error(err error) string { return Lines(err.Error()) }

// Writer returns a writer that passes every complete line written to it
// through Line before writing it to w; Close flushes a last line without a
// newline. Writes are buffered per line, so a line split across writes is
// still judged whole.
func Writer(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// LineWriter is what Writer returns.
type LineWriter struct {
	w   io.Writer
	buf []byte
}

// Write implements io.Writer.
func (l *LineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSuffix(string(l.buf[:i]), "\r")
		if _, err := io.WriteString(l.w, Line(line)+"\n"); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

// Close writes what is left (a last line without a newline).
func (l *LineWriter) Close() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, Line(string(l.buf)))
	l.buf = nil
	return err
}
