package apiserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Missing binaries name where they were looked for and how to build them;
// present ones are found through NRL_TOOLS_DIR or KUBEBUILDER_ASSETS.
func TestAssets(t *testing.T) {
	tools := t.TempDir()
	dir := filepath.Join(tools, "kube-apiserver-"+Version)
	t.Setenv("NRL_TOOLS_DIR", tools)
	t.Setenv("KUBEBUILDER_ASSETS", "")

	_, err := Assets()
	require.ErrorContains(t, err, "no kube-apiserver in "+dir)
	require.ErrorContains(t, err, "./hack/apiserver.sh")

	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-apiserver"), nil, 0o755))
	_, err = Assets()
	require.ErrorContains(t, err, "no etcd in "+dir)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "etcd"), nil, 0o755))
	got, err := Assets()
	require.NoError(t, err)
	require.Equal(t, dir, got)

	other := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", other)
	_, err = Assets()
	require.ErrorContains(t, err, "no kube-apiserver in "+other, "KUBEBUILDER_ASSETS wins over the cache folder")
}

// The CRDs the server gets are the ones fn/analyse/schema embeds, and they parse.
func TestReadCRDs(t *testing.T) {
	crds, err := readCRDs()
	require.NoError(t, err)
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"rayclusters.ray.io", "rayjobs.ray.io", "computedomains.resource.nvidia.com"}, names)
}
