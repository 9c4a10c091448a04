package krm_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tooling/ociimage"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

const imageRef = "ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"

// TestNrlK8sImage does what `make image` does (static linux/amd64 builds,
// ociimage.Build, WriteTarball) and checks the tarball is the function the
// examples reference: entrypoint nrl-krm (the KRM function alone),
// non-root, amd64, a binary in its layer that renders a ResourceList, and
// the nrl-k8s CLI beside it (the chart's test hook runs it).
func TestNrlK8sImage(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds nrl-krm and nrl-k8s")
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for _, name := range []string{clirun.Lean, clirun.CLI} {
		bin, err := clirun.BuildForImage(dir, name, "-s -w -X github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli.Version=v0.1.0")
		require.NoError(t, err)
		bins[name] = bin
	}

	img, err := ociimage.Build(ociimage.Options{BinaryPath: bins["nrl-krm"],
		Extra: []ociimage.Binary{{Path: bins["nrl-k8s"], Dest: ociimage.CLIBinaryDest}}})
	require.NoError(t, err)
	tarPath := filepath.Join(dir, "nrl-k8s-image.tar")
	require.NoError(t, ociimage.WriteTarball(img, imageRef, tarPath))

	loaded, err := tarball.ImageFromPath(tarPath, nil)
	require.NoError(t, err)
	cf, err := loaded.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/local/bin/nrl-krm"}, cf.Config.Entrypoint)
	require.Equal(t, "65532:65532", cf.Config.User)
	require.Equal(t, "amd64", cf.Architecture)
	require.Equal(t, "linux", cf.OS)

	cliExe := extractFile(t, mutate.Extract(loaded), "usr/local/bin/nrl-k8s", dir)
	exe := extractFile(t, mutate.Extract(loaded), "usr/local/bin/nrl-krm", dir)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("cannot run a linux/amd64 binary on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	version, err := exec.Command(cliExe, "--version").CombinedOutput()
	require.NoError(t, err, "%s", version)
	require.Contains(t, string(version), "v0.1.0")

	in, err := os.ReadFile("testdata/qwen-rayjob/input.yaml")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/qwen-rayjob/" + expectedOutput)
	require.NoError(t, err)
	fn := exec.Command(exe)
	fn.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	fn.Stderr = &stderr
	got, err := fn.Output()
	require.NoError(t, err, "%s", stderr.String())
	require.Equal(t, string(want), string(got))
}

// extractFile copies one file of a flattened image filesystem to dir.
func extractFile(t *testing.T, rc io.ReadCloser, name, dir string) string {
	t.Helper()
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s not in the image", name)
		}
		require.NoError(t, err)
		if hdr.Name != name && hdr.Name != "/"+name {
			continue
		}
		require.Equal(t, int64(0o755), hdr.Mode&0o777)
		p := filepath.Join(dir, filepath.Base(name))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		require.NoError(t, err)
		_, err = io.Copy(f, tr)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		return p
	}
}
