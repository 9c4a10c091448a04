package fluxapply_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
)

func specFrom(t *testing.T, spec string) *fluxapply.Spec {
	t.Helper()
	objs, err := fixtures.Decode([]byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: r, namespace: flux-system}\nspec: " + spec))
	require.NoError(t, err)
	got, err := fluxapply.SpecOf(objs[0])
	if err != nil {
		return nil
	}
	return &got
}

func TestSpecOf(t *testing.T) {
	assert.Equal(t, &fluxapply.Spec{Name: "r", Namespace: "flux-system", Prune: true, Force: true, DeletionPolicy: fluxapply.Delete},
		specFrom(t, "{prune: true, force: true, deletionPolicy: Delete}"))
	assert.Equal(t, &fluxapply.Spec{Name: "r", Namespace: "flux-system"}, specFrom(t, "{path: ./x}"), "unset fields are Flux's defaults")
	assert.Nil(t, specFrom(t, "{prune: 'yes'}"), "a prune that is no boolean is refused")
}

// Build builds the path the Kustomization names under the checkout, a
// resource from outside that folder included (no load restrictions), and
// keeps integers integers.
func TestBuild(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "flux", "r"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "manifests"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "manifests", "r.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "flux", "r", "kustomization.yaml"), []byte("resources: [../../manifests/r.yaml]\n"), 0o600))
	objs, err := fixtures.Decode([]byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: r}\nspec: {path: ./flux/r}\n"))
	require.NoError(t, err)
	built, err := fluxapply.Build(root, objs[0])
	require.NoError(t, err)
	require.Len(t, built, 1)
	assert.Equal(t, "s", built[0].GetName())
	ports := built[0].Object["spec"].(map[string]any)["ports"].([]any)
	assert.Equal(t, int64(80), ports[0].(map[string]any)["port"])

	objs[0].Object["spec"] = map[string]any{"path": "./missing"}
	_, err = fluxapply.Build(root, objs[0])
	assert.ErrorContains(t, err, "Kustomization r")
}
