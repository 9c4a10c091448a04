package krm

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// The standalone form, as kyaml's command.Build reads arguments: the first
// file is the function config, the rest are items (stdin first when "-" is
// among them), one document separator between two files, bare items out.
func TestStandalone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	cfg := write("cfg.yaml", "kind: NemoRLRun\n")
	a := write("a.yaml", "kind: A") // no final newline
	b := write("b.yaml", "kind: B\n")
	cases := []struct {
		name  string
		args  []string
		items string
		err   string
	}{
		{"the config alone", []string{cfg}, "", ""},
		{"files in order, stdin first", []string{cfg, a, "-", b}, "kind: S\n\n---\nkind: A\n---\nkind: B\n", ""},
		{"no config file", []string{filepath.Join(dir, "none.yaml")}, "", `unable to read configuration file "` + filepath.Join(dir, "none.yaml")},
		{"a config that is not YAML", []string{write("bad.yaml", "a: [")}, "", "unable to parse configuration file"},
		{"no item file", []string{cfg, filepath.Join(dir, "none.yaml")}, "", `unable to read "` + filepath.Join(dir, "none.yaml")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rw := &kio.ByteReadWriter{KeepReaderAnnotations: true}
			err := Standalone(rw, strings.NewReader("kind: S\n"), tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "NemoRLRun", rw.FunctionConfig.GetKind())
			items, err := io.ReadAll(rw.Reader)
			require.NoError(t, err)
			require.Equal(t, tc.items, string(items))
			require.True(t, rw.NoWrap)
			require.False(t, rw.KeepReaderAnnotations)
		})
	}
}

// stdin is read whole only when used, and at most MaxFunctionInput bytes.
func TestReadCapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		used bool
		err  string
	}{
		{"not used: not read", MaxFunctionInput + 1, false, ""},
		{"at the cap", MaxFunctionInput, true, ""},
		{"over the cap", MaxFunctionInput + 1, true, "the function's input (stdin) is over the 2097152-byte limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdin := bytes.NewReader(make([]byte, tc.size))
			r, err := ReadCapped(stdin, tc.used)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if !tc.used {
				require.Same(t, stdin, r)
				return
			}
			b, err := io.ReadAll(r)
			require.NoError(t, err)
			require.Len(t, b, tc.size)
		})
	}
}
