package ociimage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/stretchr/testify/require"
)

// The OCI layout holds exactly the image (same digest as the tarball's),
// named by its tag, and rewriting it replaces the old image.
func TestWriteLayout(t *testing.T) {
	img, err := Build(testOptions(t))
	require.NoError(t, err)
	want, err := Digest(img)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "oci")
	for i := 0; i < 2; i++ {
		require.NoError(t, WriteLayout(img, testRef, dir))
	}
	for _, f := range []string{"oci-layout", "index.json"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 1, "one image, even after writing twice")
	require.Equal(t, want, m.Manifests[0].Digest.String())
	require.Equal(t, "v0.1.0", m.Manifests[0].Annotations[RefNameAnnotation])
	loaded, err := idx.Image(m.Manifests[0].Digest)
	require.NoError(t, err)
	cf, err := loaded.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{DefaultBinaryDest}, cf.Config.Entrypoint)
}

// A reference that is no tag is refused before the directory is touched.
func TestWriteLayoutRefusesABadRef(t *testing.T) {
	img, err := Build(testOptions(t))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644))
	for _, ref := range []string{"not a ref!", "UPPER/case:v1", ""} {
		err := WriteLayout(img, ref, dir)
		require.ErrorContains(t, err, "ociimage: tag ", ref)
		_, err = os.Stat(filepath.Join(dir, "keep"))
		require.NoError(t, err, "%q: the directory is left as it was", ref)
	}
}
