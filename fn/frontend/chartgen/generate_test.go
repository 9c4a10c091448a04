package chartgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// The rendered-file format: a JSON array, one document per line, keys
// sorted; a document that cannot be encoded is named.
func TestEncodeDocs(t *testing.T) {
	doc := func(data map[string]any) rendered.Doc { return rendered.Doc{Kind: "RayJob", Name: "j", Data: data} }
	cases := []struct {
		name string
		docs []rendered.Doc
		want string
		err  string
	}{
		{"none", nil, "[\n]\n", ""},
		{"one", []rendered.Doc{doc(map[string]any{"b": 1, "a": "<x>"})}, "[\n{\"a\":\"\\u003cx\\u003e\",\"b\":1}\n]\n", ""},
		{"two, a comma between", []rendered.Doc{doc(map[string]any{"a": 1}), doc(map[string]any{"a": 2})}, "[\n{\"a\":1},\n{\"a\":2}\n]\n", ""},
		{"not encodable", []rendered.Doc{doc(map[string]any{"f": func() {}})}, "", "RayJob j: json: unsupported type: func()"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EncodeDocs(tc.docs)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// Write puts the generated files in and removes the rendered files and
// document slots no profile produces any more; other templates stay.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"files/profiles.json": "old", "files/rendered/gone.json": "g", "files/rendered/kept.json": "k",
		"templates/doc-00.yaml": "d", "templates/doc-05.yaml": "d", "templates/_helpers.tpl": "h",
	})
	files := map[string][]byte{"files/profiles.json": []byte("new"), "files/rendered/kept.json": []byte("k"),
		"files/rendered/new.json": []byte("n"), slotFile(0): []byte("d0")}
	require.NoError(t, Write(filepath.ToSlash(dir), files))
	got := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	require.Equal(t, map[string]string{
		"files/profiles.json": "new", "files/rendered/kept.json": "k", "files/rendered/new.json": "n",
		"templates/doc-00.yaml": "d0", "templates/_helpers.tpl": "h",
	}, got)
	stale, err := Stale(dir, files)
	require.NoError(t, err)
	require.Empty(t, stale)
}

// A file as the chart records it: relative to the index for chart-new, as
// given for chart-data.
func TestShown(t *testing.T) {
	for _, tc := range []struct{ indexDir, file, want string }{
		{"", "profiles/p.yaml", "profiles/p.yaml"},
		{"teams/a", "", ""},
		{"teams/a", "teams/a/p.yaml", "p.yaml"},
		{"teams/a", "profiles/p.yaml", "../../profiles/p.yaml"},
	} {
		require.Equal(t, tc.want, (&gen{indexDir: tc.indexDir}).shown(tc.file), "%s in %s", tc.file, tc.indexDir)
	}
	require.Equal(t, "templates/doc-07.yaml", slotFile(7))
}
