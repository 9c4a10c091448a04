// Package vendored checks that the upstream files the repository carries
// are byte-for-byte the upstream copies in ../shared, when that folder is
// checked out beside the repository. Nothing else reads ../shared: the
// repository tests itself from its own copies.
package vendored_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// copies maps each vendored file or folder (relative to the repository
// root) to its upstream copy (relative to ../shared). A folder must hold
// exactly the upstream folder's files, each with the same bytes. Our own
// READMEs beside the copies say where they come from and are not compared.
var copies = []struct{ ours, upstream string }{
	// NeMo-RL's recipe tree, laid out as its repository root.
	{"recipes/examples/configs", "nemo-rl-examples/configs"},
	{"recipes/examples/nemo_gym", "nemo-rl-examples/nemo_gym"},
	{"recipes/examples/modelopt", "nemo-rl-examples/modelopt"},
	{"recipes/LICENSE.nemo-rl", "nemo-rl-examples/LICENSE.nemo-rl"},
	// What NeMo-RL's nrl-k8s rendered: the behaviour tests compare with.
	{"testdata/nemo-rl/reference", "nemo-rl-examples/reference"},
	{"testdata/nemo-rl/LICENSE.nemo-rl", "nemo-rl-examples/LICENSE.nemo-rl"},
	// The GB300 profiles nrl-k8s shipped; they are also the reference's inputs.
	{"profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml", "nemo-rl-examples/infra/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
	{"profiles/gb300/ultra_48n_pipeclean.gb300.infra.yaml", "nemo-rl-examples/infra/ultra_48n_pipeclean.gb300.infra.yaml"},
	{"profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml", "nemo-rl-examples/infra/ultra_64n_pipeclean.gb300.infra.yaml"},
	{"profiles/LICENSE.nemo-rl", "nemo-rl-examples/LICENSE.nemo-rl"},
	// The ComputeDomain CRD that `check --strict` validates against.
	{"fn/analyse/schema/crds/resource.nvidia.com_computedomains.yaml", "crds/resource.nvidia.com_computedomains.yaml"},
	{"fn/analyse/schema/crds/LICENSE.k8s-dra-driver-gpu", "crds/LICENSE.k8s-dra-driver-gpu"},
}

// files lists the regular files under root (root itself if it is a file),
// as slash paths relative to root.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

const schemaComment = "# yaml-language-server: $schema=../profile.schema.json\n"

func TestVendoredCopiesMatchShared(t *testing.T) {
	shared := filepath.Join(testenv.RepoRoot(t), "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no upstream copies to compare with: %s is not checked out beside the repository (%v)", shared, err)
	}
	for _, c := range copies {
		t.Run(c.ours, func(t *testing.T) {
			ours := filepath.Join(testenv.RepoRoot(t), filepath.FromSlash(c.ours))
			theirs := filepath.Join(shared, filepath.FromSlash(c.upstream))
			names := files(t, theirs)
			require.NotEmpty(t, names, theirs)
			require.Equal(t, names, files(t, ours), "%s must hold exactly the files of %s", c.ours, theirs)
			for _, n := range names {
				a := testenv.ReadFile(t, filepath.Join(theirs, filepath.FromSlash(n)))
				b := testenv.ReadFile(t, filepath.Join(ours, filepath.FromSlash(n)))
				// The one line we add: the shipped profiles name their
				// JSON Schema for editors (docs/profiles.md).
				b = strings.TrimPrefix(b, schemaComment)
				require.Equal(t, a, b, "%s/%s differs from %s/%s", c.ours, n, theirs, n)
			}
		})
	}
}
