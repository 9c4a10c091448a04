package secrets

import (
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMarkersAreNecessary proves each shape's markers from its pattern:
// every way the pattern can match passes through a literal that contains
// one of them, so Value's containsAny test never hides a match.
func TestMarkersAreNecessary(t *testing.T) {
	for _, sh := range shapes {
		re, err := syntax.Parse(sh.re().String(), syntax.Perl)
		require.NoError(t, err, sh.kind)
		assert.True(t, needsMarker(re, sh.markers), "%s: some match of %s need not contain any of %q", sh.kind, sh.re(), sh.markers)
	}
}

// needsMarker says whether every string re matches contains a marker.
func needsMarker(re *syntax.Regexp, markers []string) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Flags&syntax.FoldCase == 0 && containsAny(string(re.Rune), markers)
	case syntax.OpCapture:
		return needsMarker(re.Sub[0], markers)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !needsMarker(s, markers) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		// Parsed alternatives of literals share their common prefix
		// (AKIA|ASIA is A(?:KIA|SIA)): a concatenation's literals are
		// read as one string when its parts are literals or such
		// alternations.
		for _, s := range re.Sub {
			if needsMarker(s, markers) {
				return true
			}
		}
		alts := expand(re)
		for _, alt := range alts {
			if !containsAny(alt, markers) {
				return false
			}
		}
		return len(alts) > 0
	}
	return false
}

// expand is every string a literal, a small character class or an
// alternation of them matches, and for a concatenation every prefix its
// leading run of such parts matches (each match of it starts with one); nil
// when there is none.
func expand(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 8 {
				return nil
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		return out
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			e := expand(s)
			if e == nil {
				return nil
			}
			out = append(out, e...)
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			e := expand(s)
			if e == nil {
				// A part that is not a literal ends the run of literals;
				// only a prefix of literals is kept.
				break
			}
			var next []string
			for _, p := range out {
				for _, x := range e {
					next = append(next, p+x)
				}
			}
			out = next
		}
		if len(out) == 1 && out[0] == "" {
			return nil
		}
		return out
	}
	return nil
}

// TestValueUsesMarkers: the markers change what is scanned, never what is
// found (the same answer as every pattern tried on every value).
func TestValueUsesMarkers(t *testing.T) {
	for _, s := range []string{
		"AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "x AKIAABCDEFGHIJKLMNOP y",
		"ghp_" + strings.Repeat("a", 24), "github_pat_" + strings.Repeat("b", 24),
		"hf_" + strings.Repeat("c", 24), "nvapi-" + strings.Repeat("d", 24), "sk-" + strings.Repeat("e", 24),
		"xoxb-" + strings.Repeat("1", 12), "-----BEGIN RSA PRIVATE KEY-----",
		"https://user:pass@host/x", "https://user:$PASS@host/x", "plain value", "", "gh", "://",
	} {
		want := ""
		for _, sh := range shapes {
			if sh.re().MatchString(s) {
				want = sh.kind
				break
			}
		}
		got, _ := Value(s)
		assert.Equal(t, want, got, s)
	}
}
