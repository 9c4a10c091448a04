package chartgen

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Epoch is the timestamp of every archive entry. helm v3's chartutil.Save
// stamps entries with time.Now(), so `helm package` of the same chart gives
// a different .tgz (and digest) every second; a fixed time makes the archive
// a function of the chart alone.
var Epoch = time.Unix(0, 0).UTC()

// helmGzipExtra is the gzip header helm package writes (chartutil.Save); we
// keep it so the archive is helm's in every byte but the timestamps.
var helmGzipExtra = []byte("+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=")

// Package writes outDir/<name>-<version>.tgz from chartDir (honouring its
// .helmignore, through helm's own loader) in chartutil.Save's layout and
// order, and returns the file and its sha256.
func Package(chartDir, outDir string) (string, string, error) {
	c, err := loader.LoadDir(chartDir)
	if err != nil {
		return "", "", err
	}
	data, err := Archive(c)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", "", err
	}
	file := filepath.Join(outDir, fmt.Sprintf("%s-%s.tgz", c.Name(), c.Metadata.Version))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", "", err
	}
	// helm push takes the OCI manifest's org.opencontainers.image.created
	// annotation from the archive file's modification time (Helm 3 and 4,
	// pkg/pusher/ocipusher.go), so the pushed digest would follow the time
	// the file was written: pin it as the entries' time is pinned.
	if err := os.Chtimes(file, Epoch, Epoch); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(data)
	return file, hex.EncodeToString(sum[:]), nil
}

// Archive is the .tgz of a loaded chart.
func Archive(c *chart.Chart) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("chart validation: %w", err)
	}
	if len(c.Dependencies()) > 0 || c.Lock != nil {
		return nil, errors.New("charts with dependencies are not supported; expected a self-contained chart")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Extra = helmGzipExtra
	zw.Comment = "Helm"
	tw := tar.NewWriter(zw)
	base := c.Name()
	add := func(name string, body []byte) error {
		h := &tar.Header{Name: path.Join(base, name), Mode: 0o644, Size: int64(len(body)), ModTime: Epoch, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	meta, err := yaml.Marshal(c.Metadata)
	if err != nil {
		return nil, err
	}
	if err := add("Chart.yaml", meta); err != nil {
		return nil, err
	}
	for _, f := range c.Raw {
		if f.Name == "values.yaml" {
			if err := add(f.Name, f.Data); err != nil {
				return nil, err
			}
		}
	}
	if c.Schema != nil {
		if err := add("values.schema.json", c.Schema); err != nil {
			return nil, err
		}
	}
	for _, f := range c.Templates {
		if err := add(f.Name, f.Data); err != nil {
			return nil, err
		}
	}
	for _, f := range c.Files {
		if err := add(f.Name, f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Stale lists the generated files whose committed copy differs, and
// rendered files no profile produces any more.
func Stale(chartDir string, files map[string][]byte) ([]string, error) {
	var out []string
	for _, rel := range tree.SortedKeys(files) {
		old, err := os.ReadFile(filepath.Join(chartDir, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, rel+": missing")
		case err != nil:
			return nil, err
		case !bytes.Equal(old, files[rel]):
			out = append(out, rel+": differs from what the engine generates")
		}
	}
	entries, err := os.ReadDir(filepath.Join(chartDir, filepath.FromSlash(RenderedDir)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		rel := path.Join(RenderedDir, e.Name())
		if _, ok := files[rel]; !ok {
			out = append(out, rel+": no packaged profile renders it")
		}
	}
	slots, err := os.ReadDir(filepath.Join(chartDir, "templates"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range slots {
		rel := path.Join("templates", e.Name())
		if _, ok := files[rel]; slotRE().MatchString(e.Name()) && !ok {
			out = append(out, rel+": no render has that many documents")
		}
	}
	return out, nil
}
