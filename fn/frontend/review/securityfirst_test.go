package review_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// A summary may leave out tables, never which runs change security, scope
// or privileges: among 250 changed runs with long names, most of them image
// bumps, the 20 whose service account changes are each named in the first
// lines and their tables come first; the image bumps rank below them, and
// the comment stays within GitHub's 65,536 characters.
func TestSecurityChangesAreNamedFirst(t *testing.T) {
	file := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests", "qwen3-math-4n.yaml")
	render := testenv.ReadFile(t, file)
	old, cur := review.Render{}, review.Render{}
	var security []string
	for i := range 250 {
		name := fmt.Sprintf("sweep-%03d-a-run-name-as-long-as-a-lab-would-give-its-sweeps", i)
		data := strings.ReplaceAll(render, "qwen3-math-4n", name)
		o, err := review.Parse(name, name, []byte(data))
		require.NoError(t, err)
		old[name] = o
		if i%13 == 0 {
			data = strings.ReplaceAll(data, "serviceAccountName: nemo-rl-endpoint-registry", "serviceAccountName: cluster-admin")
			security = append(security, name)
		} else {
			data = strings.ReplaceAll(data, "nemo-rl:664d29c-49528955", "nemo-rl:664d29c-49600000")
		}
		c, err := review.Parse(name, name, []byte(data))
		require.NoError(t, err)
		cur[name] = c
	}
	s := review.Diff(old, cur)
	require.Len(t, s.Runs, 250)
	require.Greater(t, len(s.Markdown()), 65536, "the uncut summary is over the limit, or the test proves nothing")

	text, left := s.MarkdownWithin(65536, "summary-full.md")
	require.LessOrEqual(t, len(text), 65536)
	require.Positive(t, left)
	first := strings.Index(text, "\n#### ")
	require.Positive(t, first)
	head := text[:first]
	require.Contains(t, head, fmt.Sprintf("Security, scope or privileges change in %d runs: ", len(security)))
	for _, name := range security {
		assert.Contains(t, head, "`"+name+"`", "every security change is named")
	}
	assert.Contains(t, head, "Images change in 230 existing runs: ")
	assert.Less(t, strings.Index(head, "Security, scope"), strings.Index(head, "Images change"))
	tables := strings.Split(text[first:], "\n#### ")[1:]
	require.Greater(t, len(tables), len(security))
	for i, tbl := range tables {
		isSecurity := i < len(security)
		assert.Equal(t, isSecurity, strings.Contains(tbl, "serviceAccount"), "table %d: the security changes come first, then the image bumps", i)
	}
}
