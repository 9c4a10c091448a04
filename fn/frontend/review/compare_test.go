package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Compare reads both sides (two files are two versions of the run named
// after NEW), prints text or a comment cut to MaxSize, and writes the
// uncut summary to Full; a file it cannot write is an error naming --full.
func TestCompare(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests")
	qwen, ultra := filepath.Join(dir, "qwen3-math-4n.yaml"), filepath.Join(dir, "ultra-48n.yaml")
	cases := []struct {
		name     string
		o        CompareOptions
		full     bool   // write the uncut summary to a temp file
		text     string // out.Text holds it
		fullText string // the written file holds it ("=": exactly out.Text)
		err      string
	}{
		{name: "two files, text", o: CompareOptions{Old: qwen, New: ultra}, full: true,
			text: "ultra-48n: changed\n  GPU nodes   4 → 48 (+44)\n", fullText: "="},
		{name: "markdown cut, the file uncut", o: CompareOptions{Old: qwen, New: ultra, Markdown: true, MaxSize: 300}, full: true,
			text: "1 run left out here (", fullText: "#### `ultra-48n` (changed)"},
		{name: "markdown without a limit", o: CompareOptions{Old: qwen, New: ultra, Markdown: true},
			text: "#### `ultra-48n` (changed)"},
		{name: "stdin against a file", o: CompareOptions{Old: "-", New: qwen, Stdin: strings.NewReader(testenv.ReadFile(t, qwen))},
			text: "1 run unchanged\n"},
		{name: "a side that cannot be read", o: CompareOptions{Old: filepath.Join(dir, "no-such.yaml"), New: qwen}, err: "no-such.yaml"},
		{name: "--full unwritable", o: CompareOptions{Old: qwen, New: ultra, Full: filepath.Join(t.TempDir(), "no-such-dir", "x.md")}, err: "--full: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.full {
				tc.o.Full = filepath.Join(t.TempDir(), "summary-full.md")
			}
			out, err := Compare(tc.o)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, out.Failures)
			assert.Contains(t, out.Text, tc.text)
			if tc.full {
				written := testenv.ReadFile(t, tc.o.Full)
				if tc.fullText == "=" {
					assert.Equal(t, out.Text, written)
				} else {
					assert.Contains(t, written, tc.fullText)
					assert.NotContains(t, out.Text, tc.fullText)
				}
			}
		})
	}
}

// The uncut summary goes through stdout's per-line guard: a control
// character in it cannot reach the browser or CI log reading the file.
func TestWriteGuarded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "full.md")
	require.NoError(t, writeGuarded(file, "a\x1b[2Jb\nlast"))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "\x1b")
	assert.True(t, strings.HasPrefix(string(b), "a"), "%q", b)
	assert.True(t, strings.HasSuffix(string(b), "\nlast"), "the last line without a newline is written: %q", b)
}
