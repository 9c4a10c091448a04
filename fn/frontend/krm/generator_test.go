package krm_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// A generator's package root stays inside the git work tree holding the
// kustomization, or inside the kustomization's directory outside one.
func TestGeneratorRootStaysInTheRepository(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	k := filepath.Join(repo, "deploy", "team")
	require.NoError(t, os.MkdirAll(k, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k, "kustomization.yaml"), []byte("generators: [gen.yaml]\n"), 0o644))
	inputs := func(dir, root string) krm.GeneratorInputs {
		return krm.GeneratorInputs{Root: root, Dir: dir, RootName: "files", RunName: func(int) string { return "runs" }}
	}
	for _, c := range []struct {
		root    string
		git, ok bool
	}{
		{".", false, true}, {"..", false, false}, {"/", false, false},
		{".", true, true}, {"../..", true, true}, {"../../..", true, false}, {"/", true, false}, {top, true, false},
	} {
		if c.git {
			testenv.GitCheckout(t, repo)
		}
		_, err := krm.NewGenerator(inputs(k, c.root))
		if c.ok {
			require.NoError(t, err, "files %s (git %v)", c.root, c.git)
			continue
		}
		require.ErrorContains(t, err, `files "`+c.root+`": is outside the repository`, "git %v", c.git)
		require.NotContains(t, err.Error(), repo, "the message names the bound, not this machine's path")
	}
}
