package review

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// obj is a one-object render of a ConfigMap named name.
func obj(name string) string { return "kind: ConfigMap\nmetadata: {name: " + name + "}\n" }

// ReadRender reads a stream, a render file (one run named after it) or a
// tree's *.yaml and *.yml (hidden folders and kustomization files not);
// it refuses links, special files, unprintable names and two files of one
// run name, and leaves a runs repository to readRunsRepo.
func TestReadRenderFiles(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string // path below the temp dir to content; "->x" a link to x, "|" a fifo
		arg    string            // the argument below the temp dir ("-": stdin)
		stdin  io.Reader
		runs   []string // nil with err == "": a runs repository (no render)
		isFile bool
		err    string
	}{
		{name: "a file", files: map[string]string{"a.yaml": obj("a")}, arg: "a.yaml", runs: []string{"a"}, isFile: true},
		{name: "a tree", files: map[string]string{
			"a.yaml": obj("a"), "sub/b.yml": obj("b"), ".git/c.yaml": obj("c"), "sub/.hidden/d.yaml": obj("d"),
			"kustomization.yaml": "resources: [a.yaml]\n", "sub/kustomization.yml": "x", "README.md": "x",
		}, arg: ".", runs: []string{"a", "b"}},
		{name: "stdin", arg: "-", stdin: strings.NewReader(obj("a")), runs: []string{"stdin"}, isFile: true},
		{name: "stdin over the limit", arg: "-", stdin: io.LimitReader(comments{}, source.MaxRenderSize+1), err: "-: over the 16777216-byte limit for a render"},
		{name: "a runs repository", files: map[string]string{"runs/r.yaml": "x", "manifests/r.yaml": "x"}, arg: "."},
		{name: "two files of one run name", files: map[string]string{"a.yaml": obj("a"), "sub/a.yml": obj("a")}, arg: ".", err: `sub/a.yml: run "a" is also `},
		{name: "a link in a tree", files: map[string]string{"a.yaml": obj("a"), "b.yaml": "->a.yaml"}, arg: ".", err: "b.yaml: is a symlink; refused"},
		{name: "a linked argument", files: map[string]string{"a.yaml": obj("a"), "b.yaml": "->a.yaml"}, arg: "b.yaml", err: "b.yaml: is a symlink; refused"},
		{name: "a linked tree", files: map[string]string{"d/a.yaml": obj("a"), "e": "->d"}, arg: "e", err: "e: is a symlink; refused"},
		{name: "a fifo in a tree", files: map[string]string{"a.yaml": "|"}, arg: ".", err: "a.yaml: is not a regular file; refused"},
		{name: "an unprintable name", files: map[string]string{"a\nb.yaml": obj("a")}, arg: ".", err: `a\nb.yaml: the name holds a newline or control character; refused`},
		{name: "not a render", files: map[string]string{"a.yaml": "- x\n"}, arg: "a.yaml", err: "a.yaml: document 1"},
		{name: "missing", arg: "no-such.yaml", err: "no-such.yaml: no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range tc.files {
				file := filepath.Join(dir, p)
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				switch {
				case strings.HasPrefix(content, "->"):
					require.NoError(t, os.Symlink(content[2:], file))
				case content == "|":
					require.NoError(t, syscall.Mkfifo(file, 0o644))
				default:
					require.NoError(t, os.WriteFile(file, []byte(content), 0o644))
				}
			}
			arg := tc.arg
			if arg != "-" {
				arg = filepath.Join(dir, arg)
			}
			r, isFile, err := readRenderFiles(arg, tc.stdin)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.isFile, isFile)
			if tc.runs == nil {
				assert.Nil(t, r)
				return
			}
			assert.Equal(t, tc.runs, tree.SortedKeys(r))
		})
	}
}

// Process substitution hands over /dev/fd/N, a link to a pipe: read as
// the stream it is, named after it.
func TestReadRenderProcessSubstitution(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = pr.Close() }()
	_, err = pw.WriteString(obj("a"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	r, isFile, failed, err := ReadRender("/dev/fd/"+strconv.Itoa(int(pr.Fd())), false, nil)
	require.NoError(t, err)
	assert.True(t, isFile)
	assert.Nil(t, failed)
	run := OnlyRun(r)
	require.NotNil(t, run)
	assert.Equal(t, []string{"ConfigMap/a"}, tree.SortedKeys(run.Objects))
}

// comments is an endless stream of "#".
type comments struct{}

func (comments) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}
