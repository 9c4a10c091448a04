package kustomizeconf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// What `nrl-k8s kustomize-config` prints is what kustomize/ holds: the
// OpenAPI file from the CRDs built into the binary, not the vendored files.
func TestFileIsTheShippedFile(t *testing.T) {
	root := testenv.RepoRoot(t)
	for name, path := range map[string]string{"configuration": ConfigurationFile, "openapi": OpenAPIFile} {
		want, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		got, err := File(name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), name)
	}
	_, err := File("kustomization")
	require.ErrorContains(t, err, `unknown file "kustomization"; expected configuration or openapi`)
}
