package kustomizeconf

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite kustomize/nrl-k8s.configuration.yaml and kustomize/openapi/kuberay.json (make golden)")

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
	testenv.Golden(t, filepath.Join(root, OpenAPIFile), schema, *update)
	testenv.Golden(t, filepath.Join(root, ConfigurationFile), Configuration(), *update)
}
