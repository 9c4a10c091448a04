package shell_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

func TestTokenize(t *testing.T) {
	s := `A=1 python 'a b' "c\"d" e\ f 2>&1 | tee log # note`
	words, comment := shell.Tokenize(s, 0, len(s))
	var texts []string
	for _, w := range words {
		texts = append(texts, w.Text)
	}
	require.Equal(t, []string{"A=1", "python", "a b", `c"d`, "e f", "2>&1", "|", "tee", "log"}, texts)
	require.Equal(t, "'a b'", s[words[2].Start:words[2].End], "spans cover the raw text, quotes included")
	require.True(t, words[5].Op && shell.IsRedirection(words[5].Text))
	require.True(t, words[6].Op && !shell.IsRedirection(words[6].Text))
	require.Equal(t, 5, shell.CommandEnd(words, 0)-1, "the pipe ends the first command; the redirection belongs to it")
	require.Equal(t, len(s)-len("# note"), comment)
}

func TestLineState(t *testing.T) {
	script := "bash -c \"\npython run_grpo.py\n\"\ncat <<EOF\nbody $X\nEOF\necho done"
	var st shell.LineState
	var wrapped []string
	from := 0
	for line := 1; from <= len(script); line++ {
		to := from
		for to < len(script) && script[to] != '\n' {
			to++
		}
		wrapped = append(wrapped, st.Wrapped())
		words, _ := shell.Tokenize(script, from, to)
		st.Advance(script, from, to, line, words)
		from = to + 1
	}
	require.Empty(t, wrapped[0])
	require.Contains(t, wrapped[1], "double-quoted string opened on line 1")
	require.Empty(t, wrapped[3])
	require.Contains(t, wrapped[4], "heredoc opened on line 4")
	require.Empty(t, wrapped[6], "after the heredoc's delimiter the shell reads commands again")
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "''",
		"cluster.num_nodes=4":     "cluster.num_nodes=4",
		"logger.name=a b":         "'logger.name=a b'",
		"x='y'":                   `'x='"'"'y'"'"''`,
		"policy.lr=$(rm -rf /)":   "'policy.lr=$(rm -rf /)'",
		"~policy.optimizer":       "'~policy.optimizer'",
		"+a.b=[1,2]":              "'+a.b=[1,2]'",
		"path/to/file.yaml:12,13": "path/to/file.yaml:12,13",
	} {
		require.Equal(t, want, shell.Quote(in), in)
		require.Equal(t, want == in, shell.IsSafe(in), in)
	}
	require.Equal(t, "'a b'", shell.QuoteLike("'x'", "a b"))
	require.Equal(t, `"a b"`, shell.QuoteLike(`"x"`, "a b"))
	require.Equal(t, `'a"b'`, shell.QuoteLike(`"x"`, `a"b`), "a double quote cannot hold a double quote: shell quoting instead")
}
