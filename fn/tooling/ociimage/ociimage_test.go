package ociimage

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

const testRef = "ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"

var (
	helloOnce sync.Once
	helloPath string
	helloErr  error
	helloOut  []byte
)

// helloBinary compiles testdata/hello once per test run as a static
// linux/amd64 binary, the same way a release build would.
func helloBinary(t *testing.T) string {
	t.Helper()
	helloOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ociimage-hello-")
		if err != nil {
			helloErr = err
			return
		}
		helloPath = filepath.Join(dir, "hello")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", helloPath, ".")
		cmd.Dir = filepath.Join("testdata", "hello")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		helloOut, helloErr = cmd.CombinedOutput()
	})
	require.NoError(t, helloErr, "go build testdata/hello: %s", helloOut)
	return helloPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if helloPath != "" {
		_ = os.RemoveAll(filepath.Dir(helloPath))
	}
	os.Exit(code)
}

func testOptions(t *testing.T) Options {
	return Options{
		BinaryPath: helloBinary(t),
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://github.com/nemo-rl-krm/nemo-rl-krm",
			"org.opencontainers.image.title":   "nrl-k8s",
			"org.opencontainers.image.version": "v0.1.0",
		},
	}
}

func TestBuildWriteReload(t *testing.T) {
	img, err := Build(testOptions(t))
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "image.tar")
	require.NoError(t, WriteTarball(img, testRef, out))

	loaded, err := tarball.ImageFromPath(out, nil)
	require.NoError(t, err)

	cf, err := loaded.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{DefaultBinaryDest}, cf.Config.Entrypoint)
	require.Equal(t, DefaultUser, cf.Config.User)
	require.NotContains(t, []string{"", "0", "root", "0:0", "root:root"}, cf.Config.User)
	require.Equal(t, "amd64", cf.Architecture)
	require.Equal(t, "linux", cf.OS)
	require.Equal(t, "/", cf.Config.WorkingDir)
	require.Equal(t, []string{"PATH=/usr/local/bin"}, cf.Config.Env)
	require.Equal(t, "nrl-k8s", cf.Config.Labels["org.opencontainers.image.title"])
	require.True(t, cf.Created.Equal(time.Unix(0, 0)), "created = %v", cf.Created.Time)
	require.Len(t, cf.RootFS.DiffIDs, 1)
	require.Len(t, cf.History, 1)

	// The reloaded image must be byte-identical to what we built.
	want, err := Digest(img)
	require.NoError(t, err)
	got, err := Digest(loaded)
	require.NoError(t, err)
	require.Equal(t, want, got)

	files := extract(t, loaded)

	bin, ok := files["usr/local/bin/nrl-krm"]
	require.True(t, ok, "binary missing from layer")
	require.Equal(t, int64(0o755), bin.hdr.Mode)
	require.Equal(t, 0, bin.hdr.Uid)
	require.Equal(t, 0, bin.hdr.Gid)
	require.True(t, bin.hdr.ModTime.Equal(time.Unix(0, 0)))

	tmp, ok := files["tmp"]
	require.True(t, ok, "/tmp missing")
	require.Equal(t, byte(tar.TypeDir), tmp.hdr.Typeflag)
	require.Equal(t, int64(0o1777), tmp.hdr.Mode)

	require.Contains(t, string(files["etc/passwd"].data), "nonroot:x:65532:65532:")
	require.Contains(t, string(files["etc/group"].data), "nonroot:x:65532:")
	// kpt and kustomize run functions `--user nobody`: the runtime looks the name up here.
	require.Contains(t, string(files["etc/passwd"].data), "\nnobody:x:65534:65534:")
	require.Contains(t, string(files["etc/group"].data), "\nnobody:x:65534:")
	require.Equal(t, 65532, files["home/nonroot"].hdr.Uid)
	// Exactly these entries and nothing else: in particular no shell.
	require.ElementsMatch(t, []string{
		"etc", "etc/group", "etc/passwd", "home", "home/nonroot", "tmp",
		"usr", "usr/local", "usr/local/bin", "usr/local/bin/nrl-krm",
	}, names(files))

	// Run the extracted binary: proves the layer holds the real, intact file.
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("cannot execute linux/amd64 binary on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	exe := filepath.Join(t.TempDir(), "nrl-krm")
	require.NoError(t, os.WriteFile(exe, bin.data, 0o600))
	require.NoError(t, os.Chmod(exe, 0o755))
	outBytes, err := exec.Command(exe).CombinedOutput()
	require.NoError(t, err, "%s", outBytes)
	require.Equal(t, "hello-from-image\n", string(outBytes))
}

func TestBuildIsReproducible(t *testing.T) {
	a, err := Build(testOptions(t))
	require.NoError(t, err)
	b, err := Build(testOptions(t))
	require.NoError(t, err)
	da, err := Digest(a)
	require.NoError(t, err)
	db, err := Digest(b)
	require.NoError(t, err)
	require.Equal(t, da, db)

	// Sanity check that the digest actually depends on the inputs.
	opts := testOptions(t)
	opts.Labels["org.opencontainers.image.version"] = "v0.2.0"
	c, err := Build(opts)
	require.NoError(t, err)
	dc, err := Digest(c)
	require.NoError(t, err)
	require.NotEqual(t, da, dc)
}

func TestTarballManifestNamesTag(t *testing.T) {
	img, err := Build(testOptions(t))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "image.tar")
	require.NoError(t, WriteTarball(img, testRef, out))

	f, err := os.Open(out)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		require.NoError(t, err, "manifest.json not found")
		if hdr.Name != "manifest.json" {
			continue
		}
		var m []struct {
			Config   string
			RepoTags []string
			Layers   []string
		}
		require.NoError(t, json.NewDecoder(tr).Decode(&m))
		require.Len(t, m, 1)
		require.Equal(t, []string{testRef}, m[0].RepoTags)
		require.Len(t, m[0].Layers, 1)
		return
	}
}

func TestBuildCustomDest(t *testing.T) {
	opts := testOptions(t)
	opts.BinaryDest = "/app/hello"
	img, err := Build(opts)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{"/app/hello"}, cf.Config.Entrypoint)
	require.Equal(t, []string{"PATH=/app"}, cf.Config.Env)
	require.Subset(t, names(extract(t, img)), []string{"app", "app/hello"})
}

// The function's image holds the CLI beside the entrypoint's binary (the
// chart's test hook runs it), in the same layer, and the digest depends on it.
func TestBuildExtraBinary(t *testing.T) {
	opts := testOptions(t)
	opts.Extra = []Binary{{Path: helloBinary(t), Dest: CLIBinaryDest}}
	img, err := Build(opts)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{DefaultBinaryDest}, cf.Config.Entrypoint)
	require.Len(t, cf.RootFS.DiffIDs, 1)
	files := extract(t, img)
	require.Subset(t, names(files), []string{"usr/local/bin/nrl-krm", "usr/local/bin/nrl-k8s"})
	require.Equal(t, int64(0o755), files["usr/local/bin/nrl-k8s"].hdr.Mode)
	require.Equal(t, files["usr/local/bin/nrl-krm"].data, files["usr/local/bin/nrl-k8s"].data)

	alone, err := Build(testOptions(t))
	require.NoError(t, err)
	da, err := Digest(alone)
	require.NoError(t, err)
	db, err := Digest(img)
	require.NoError(t, err)
	require.NotEqual(t, da, db)
}

func TestBuildRejectsBadInput(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755))

	cases := map[string]Options{
		"no binary":                      {},
		"missing file":                   {BinaryPath: filepath.Join(t.TempDir(), "nope")},
		"not ELF":                        {BinaryPath: notELF},
		"relative dest":                  {BinaryPath: helloBinary(t), BinaryDest: "usr/bin/x"},
		"dest is /tmp":                   {BinaryPath: helloBinary(t), BinaryDest: "/tmp"},
		"dest under file":                {BinaryPath: helloBinary(t), BinaryDest: "/etc/passwd/x"},
		"wrong arch":                     {BinaryPath: helloBinary(t), Architecture: "arm64"},
		"unknown arch":                   {BinaryPath: helloBinary(t), Architecture: "mips"},
		"not linux":                      {BinaryPath: helloBinary(t), OS: "windows"},
		"extra at the entrypoint's path": {BinaryPath: helloBinary(t), Extra: []Binary{{Path: helloBinary(t), Dest: DefaultBinaryDest}}},
		"extra without a path":           {BinaryPath: helloBinary(t), Extra: []Binary{{Dest: CLIBinaryDest}}},
		"extra not ELF":                  {BinaryPath: helloBinary(t), Extra: []Binary{{Path: notELF, Dest: CLIBinaryDest}}},
		"extra at /etc/passwd":           {BinaryPath: helloBinary(t), Extra: []Binary{{Path: helloBinary(t), Dest: "/etc/passwd"}}},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Build(opts)
			require.Error(t, err)
		})
	}
}

func TestWriteTarballRejectsBadRef(t *testing.T) {
	img, err := Build(testOptions(t))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "image.tar")
	require.Error(t, WriteTarball(img, "Not A Ref!", out))
	_, err = os.Stat(out)
	require.True(t, os.IsNotExist(err))
}

type tarFile struct {
	hdr  *tar.Header
	data []byte
}

// extract flattens the image filesystem and indexes it by tar entry name.
func extract(t *testing.T, img v1.Image) map[string]tarFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string]tarFile{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		// Normalise "./tmp/" and "tmp" to one spelling.
		n := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		files[n] = tarFile{hdr: hdr, data: data}
	}
}

func names(files map[string]tarFile) []string {
	out := make([]string, 0, len(files))
	for n := range files {
		out = append(out, n)
	}
	return out
}
