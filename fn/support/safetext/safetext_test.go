package safetext

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInline(t *testing.T) {
	for in, want := range map[string]string{
		"nvcr.io/nvidia/nemo-rl:v1": "nvcr.io/nvidia/nemo-rl:v1",
		"a\nb":                      `a\nb`,
		"a\r\n::error::x":           `a\r\n::error::x`,
		"\x1b[31mred":               `\x1b[31mred`,
		"tab\tkept":                 "tab\tkept",
		"line\u2028sep\u2029":       `line\u2028sep\u2029`,
		"rtl\u202eevil\u2066":       `rtl\u202eevil\u2066`,
		"bad\xffutf8":               `bad\xffutf8`,
		"c1\u0085next":              `c1\x85next`,
		`back\slash`:                `back\slash`,
		"ünïcödé and emoji 🚀 stay":  "ünïcödé and emoji 🚀 stay",
	} {
		got := Inline(in)
		require.Equal(t, want, got, "%q", in)
		require.NotContains(t, got, "\n")
		require.NotContains(t, got, "\r")
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"::add-mask::x":         `\::add-mask::x`,
		"   ::error::x":         `   \::error::x`,
		"\t::warning::x":        "\t\\::warning::x",
		"<!-- hide the rest":    `\<!-- hide the rest`,
		"a ##[set-output x]":    `a #\#[set-output x]`,
		"image: a::b is fine":   "image: a::b is fine",
		"ordinary line":         "ordinary line",
		"x\n::stop-commands::t": `x\n::stop-commands::t`,
	} {
		require.Equal(t, want, Line(in), "%q", in)
	}
}

// No line the writer lets through starts a workflow command or an HTML
// comment, however the data is split across writes.
func TestWriterGuardsEveryLine(t *testing.T) {
	var out bytes.Buffer
	w := Writer(&out)
	for _, chunk := range []string{"ok\n::", "error::x\n  <!", "-- y\r\n", "last ##[z]"} {
		_, err := w.Write([]byte(chunk))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.Equal(t, "ok\n\\::error::x\n  \\<!-- y\nlast #\\#[z]", out.String())
	for _, l := range strings.Split(out.String(), "\n") {
		l = strings.TrimLeft(l, " \t")
		require.False(t, strings.HasPrefix(l, "::") || strings.HasPrefix(l, "<!--"), l)
	}
}

func TestLinesKeepsBreaks(t *testing.T) {
	require.Equal(t, "a\n  \\::x\nb\r\n", Lines("a\n  ::x\nb\r\n"))
	s := "plain\ntext\n"
	require.Equal(t, s, Lines(s))
}

// Every invisible or formatting character is escaped, so two names that look
// alike on screen differ in print; visible text of any script is unchanged.
func TestInlineEscapesInvisibleCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"ray\u200bworker":       `ray\u200bworker`,       // zero-width space
		"ray\u00adworker":       `ray\xadworker`,         // soft hyphen
		"ray\u2060worker":       `ray\u2060worker`,       // word joiner
		"ray\u200dworker":       `ray\u200dworker`,       // zero-width joiner
		"kube\u00a0system":      `kube\xa0system`,        // no-break space
		"kube\u3000system":      `kube\u3000system`,      // ideographic space
		"x\U000E0041\U000E007F": `x\U000e0041\U000e007f`, // TAG characters
		"a\ufe0fb":              `a\ufe0fb`,              // variation selector
		"a\u3164b":              `a\u3164b`,              // Hangul filler
		"a\u061cb":              `a\u061cb`,              // Arabic letter mark
		"a\ue000b":              `a\ue000b`,              // private use
		"a\U000F0000b":          `a\U000f0000b`,          // private use, plane 15
	} {
		require.Equal(t, want, Inline(in), "%q", in)
		require.Equal(t, want, Line(in), "%q", in)
	}
	for _, visible := range []string{"café", "训练", "Ωμέγα", "a\tb c", "ünïcödé-run"} {
		require.Equal(t, visible, Inline(visible))
	}
}
