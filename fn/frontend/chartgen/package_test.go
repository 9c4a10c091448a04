package chartgen

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// writeTree writes files (slash paths) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
}

// The archive is helm package's layout and order (Chart.yaml, values,
// schema, templates, files; .helmignore obeyed) with every time pinned,
// the file's too, so that it is a function of the chart alone; a chart
// helm would refuse, or one with subcharts, is not packaged.
func TestPackage(t *testing.T) {
	const chartYAML = "apiVersion: v2\nname: demo\nversion: 1.2.3\n"
	cases := []struct {
		name  string
		files map[string]string
		want  []string // the archive's entries, in order
		err   string
	}{
		{"helm's order, .helmignore obeyed", map[string]string{
			"Chart.yaml": chartYAML, "values.yaml": "a: 1\n", "values.schema.json": "{}\n", ".helmignore": "skip.txt\n", "skip.txt": "x",
			"templates/b.yaml": "b", "templates/a.yaml": "a", "files/x.json": "{}",
		}, []string{"demo/Chart.yaml", "demo/values.yaml", "demo/values.schema.json", "demo/templates/a.yaml", "demo/templates/b.yaml", "demo/.helmignore", "demo/files/x.json"}, ""},
		{"a subchart", map[string]string{"Chart.yaml": chartYAML, "charts/dep/Chart.yaml": "apiVersion: v2\nname: dep\nversion: 1.0.0\n"}, nil,
			"charts with dependencies are not supported; expected a self-contained chart"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
			file, sum, err := Package(dir, filepath.Join(t.TempDir(), "out"))
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "demo-1.2.3.tgz", filepath.Base(file))
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			h := sha256.Sum256(data)
			require.Equal(t, hex.EncodeToString(h[:]), sum)
			st, err := os.Stat(file)
			require.NoError(t, err)
			require.True(t, st.ModTime().Equal(Epoch), "the file's time: %s", st.ModTime())

			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			require.Equal(t, "Helm", zr.Comment)
			require.Equal(t, helmGzipExtra, zr.Extra)
			tr := tar.NewReader(zr)
			var names []string
			for {
				hdr, err := tr.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				require.True(t, hdr.ModTime.Equal(Epoch), hdr.Name)
				require.Equal(t, int64(0o644), hdr.Mode, hdr.Name)
				names = append(names, hdr.Name)
			}
			require.Equal(t, tc.want, names)
		})
	}
	_, err := Archive(&chart.Chart{Metadata: &chart.Metadata{Name: "demo"}})
	require.ErrorContains(t, err, "chart validation: ")
}

// Stale names each generated file that is missing or differs, each
// rendered file and document slot no profile produces any more, and
// nothing else.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"files/profiles.json": "old", "files/same.json": "s",
		"files/rendered/p.rayjob.json": "r", "files/rendered/gone.json": "g",
		"templates/doc-00.yaml": "d", "templates/doc-07.yaml": "d", "templates/_helpers.tpl": "h",
	})
	got, err := Stale(dir, map[string][]byte{
		"files/profiles.json": []byte("new"), "files/same.json": []byte("s"), "files/missing.json": nil,
		"files/rendered/p.rayjob.json": []byte("r"), "templates/doc-00.yaml": []byte("d"),
	})
	require.NoError(t, err)
	require.Equal(t, []string{
		"files/missing.json: missing",
		"files/profiles.json: differs from what the engine generates",
		"files/rendered/gone.json: no packaged profile renders it",
		"templates/doc-07.yaml: no render has that many documents",
	}, got)

	got, err = Stale(filepath.Join(dir, "none"), map[string][]byte{"a": nil})
	require.NoError(t, err)
	require.Equal(t, []string{"a: missing"}, got, "no chart at all: every file missing")
}
