package kustomizeconf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// crds reads the vendored CRDs the schema is generated from.
func crds(t testing.TB) map[string][]byte {
	root := testenv.RepoRoot(t)
	out := map[string][]byte{}
	for kind, file := range map[string]string{"RayJob": "ray.io_rayjobs.yaml", "RayCluster": "ray.io_rayclusters.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "fn/analyse/schema/crds", file))
		if err != nil {
			t.Fatal(err)
		}
		out[kind] = b
	}
	return out
}

// TestGoldenKustomizeFiles keeps the shipped kustomize files equal to what
// the generators make of the vendored CRDs and KubeRay's types.
func TestGoldenKustomizeFiles(t *testing.T) {
	root := testenv.RepoRoot(t)
	schema, err := OpenAPI(crds(t))
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, filepath.Join(root, OpenAPIFile), schema)
	golden.File(t, filepath.Join(root, ConfigurationFile), Configuration())
}
