// Package docs checks that the repository's documentation stands on its own:
// no page sends a reader to files that live outside the checkout.
package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// outside are names of things that exist only beside the repository (the
// workspace it was developed in), never in a clone.
var outside = []string{
	"../shared",
	"shared/nemo-rl-examples",
	"nemo-rl-examples",
	"NRL_K8S_BEHAVIOUR.md",
	"SPEC.md",
	"STYLE.md",
}

// pages are README.md and docs/*.md, plus every other Markdown file we
// write (READMEs of the chart, profiles, examples, vendored data). The
// upstream files under recipes/examples are NeMo-RL's, not ours.
func pages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "recipes/examples" || rel == "bin" || rel == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") {
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

func TestDocsStayInsideTheRepository(t *testing.T) {
	root := testenv.RepoRoot(t)
	files := pages(t, root)
	require.Contains(t, files, "README.md")
	require.Contains(t, files, "docs/nrl-k8s.md")
	require.Contains(t, files, "docs/deviations.md")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, name := range outside {
				if strings.Contains(line, name) {
					t.Errorf("%s:%d: names %q, which is not in the repository; bring what the reader needs into the repository (e.g. docs/nrl-k8s.md) instead", f, i+1, name)
				}
			}
		}
	}
}

// TestDocsInstallFromACheckout: our module is not published to a module
// proxy, so `go install github.com/nemo-rl-krm/...@latest` fails for every
// reader; the docs build the binary from a checkout instead.
func TestDocsInstallFromACheckout(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, p := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "go install") && strings.Contains(line, "nemo-rl-krm/nemo-rl-krm") {
				t.Errorf("%s:%d: %q: the module is not published; expected a build from a checkout (make build)", p, i+1, strings.TrimSpace(line))
			}
		}
	}
}
