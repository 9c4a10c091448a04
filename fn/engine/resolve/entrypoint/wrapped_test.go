package entrypoint

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An override is one literal word for the entrypoint's own shell; in a call
// another layer evaluates first (bash -c "...", an unquoted heredoc, a
// single-quoted script) that quoting does not hold, so an override that
// needs it is refused, naming why, and a plain one still goes in.
func TestWrappedCallsRefuseOverridesThatNeedQuoting(t *testing.T) {
	hostile := []string{"a.b=$(curl evil)", "a.b=`id`", "a.b='x'", "a.b=${HOME}", `a.b="x"`}
	for _, tc := range []struct {
		name, entrypoint, why string
	}{
		{"bash -c double-quoted", "bash -c \"\npython examples/run_grpo.py --config r.yaml\n\"\n", "inside the double-quoted string opened on line 1"},
		{"sh -c single-quoted", "sh -c '\n  cd /opt && python examples/run_grpo.py --config r.yaml\n'\n", "inside the single-quoted string opened on line 1"},
		{"unquoted heredoc", "bash <<EOF\npython examples/run_grpo.py --config r.yaml\nEOF\n", "inside the heredoc opened on line 1 (<<EOF)"},
		{"unquoted heredoc with tabs", "bash <<-END\n\tpython examples/run_grpo.py\n\tEND\n", "inside the heredoc opened on line 1 (<<END)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, ok := FindInvocation(tc.entrypoint)
			require.True(t, ok)
			require.Contains(t, inv.Wrapped, tc.why)
			for _, o := range hostile {
				_, err := AppendOverrides(tc.entrypoint, []string{o})
				require.Error(t, err, o)
				require.Contains(t, err.Error(), tc.why)
				require.Contains(t, err.Error(), "needs shell quoting")
			}
			got, err := AppendOverrides(tc.entrypoint, []string{"policy.lr=1e-5", "a.b=x:y,z"})
			require.NoError(t, err)
			require.Contains(t, got, "policy.lr=1e-5 a.b=x:y,z")
		})
	}
}

// A quoted heredoc's body is handed on unexpanded, to a shell that quotes
// as the entrypoint's does; after a heredoc or a closed string the calls
// are the entrypoint's own again.
func TestUnwrappedCallsQuoteOverrides(t *testing.T) {
	for _, ep := range []string{
		"bash <<'EOF'\npython examples/run_grpo.py --config r.yaml\nEOF\n",
		"cat <<EOF > note\nhello\nEOF\npython examples/run_grpo.py --config r.yaml\n",
		"echo \"a\nb\"\npython examples/run_grpo.py --config r.yaml\n",
		"python examples/run_grpo.py --config r.yaml\n",
	} {
		inv, ok := FindInvocation(ep)
		require.True(t, ok, ep)
		require.Empty(t, inv.Wrapped, ep)
		got, err := AppendOverrides(ep, []string{"a.b=$(id)"})
		require.NoError(t, err, ep)
		require.Contains(t, got, `'a.b=$(id)'`)
	}
}

// `bash -c "python .../run_grpo.py"` on one line: the call is one quoted
// word, and an override after it would be bash's $0, never the driver's.
func TestQuotedWordCallRefusesOverrides(t *testing.T) {
	ep := `bash -c "python /opt/nemo-rl/examples/run_grpo.py"` + "\n"
	_, err := AppendOverrides(ep, []string{"a.b=1"})
	require.ErrorContains(t, err, "inside the quoted word")
	require.ErrorContains(t, err, "not of the driver")
}
