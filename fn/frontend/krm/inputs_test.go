package krm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// cm is an input ConfigMap named name with annotations and the body after
// metadata (data:, binaryData:).
func cm(name, annotations, body string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations: {" + annotations + "}\n" + body
}

// itemIDs is kind/name of each item ("-" for one without a mapping).
func itemIDs(items []*yaml.RNode) []string {
	var out []string
	for _, n := range items {
		if !isMapping(n) {
			out = append(out, "-")
			continue
		}
		out = append(out, n.GetKind()+"/"+n.GetName())
	}
	return out
}

// localConfig is the annotation marking an item local config, for cm.
const localConfig = `config.kubernetes.io/local-config: "true", `

var classifyCases = []struct {
	name     string
	items    []string
	files    map[string]string
	runFiles map[string]string
	runs     []string
	through  []string
	results  []string // Result.String of each, in order
}{
	{name: "a files-dir ConfigMap: each key a file of the directory, the ConfigMap removed",
		items: []string{cm("r", "nemo-rl.nvidia.com/files-dir: recipes/./a/", "data: {x.yaml: '1', y.yaml: '2'}\n")},
		files: map[string]string{"recipes/a/x.yaml": "1", "recipes/a/y.yaml": "2"}},
	{name: "local config stays for kpt",
		items:   []string{cm("r", localConfig+"nemo-rl.nvidia.com/files-dir: .", "data: {x.yaml: '1'}\n")},
		files:   map[string]string{"x.yaml": "1"},
		through: []string{"ConfigMap/r"}},
	{name: "a single-file ConfigMap is its one key at the annotated path",
		items: []string{cm("base", "nemo-rl.nvidia.com/file: recipes/grpo.yaml", "data: {anything: 'a: 1'}\n")},
		files: map[string]string{"recipes/grpo.yaml": "a: 1"}},
	{name: "binaryData is decoded",
		items: []string{cm("b", "nemo-rl.nvidia.com/files-dir: d", "binaryData: {x.bin: aGk=}\n")},
		files: map[string]string{"d/x.bin": "hi"}},
	{name: "the same file twice with the same content",
		items: []string{cm("a", "nemo-rl.nvidia.com/files-dir: d", "data: {x: '1'}\n"), cm("b", "nemo-rl.nvidia.com/file: d/x", "data: {x: '1'}\n")},
		files: map[string]string{"d/x": "1"}},
	{name: "the same file twice with other content",
		items:   []string{cm("a", "nemo-rl.nvidia.com/files-dir: d", "data: {x: '1'}\n"), cm("b", "nemo-rl.nvidia.com/files-dir: d", "data: {x: '2'}\n")},
		files:   map[string]string{"d/x": "1"},
		results: []string{"[error] v1/ConfigMap/b data.x: ConfigMap b: file d/x is also in ConfigMap a with different content; expected one version of each file"}},
	{name: "bad ConfigMaps",
		items: []string{
			cm("up", "nemo-rl.nvidia.com/files-dir: ../x", "data: {a.yaml: x}\n"),
			cm("abs", "nemo-rl.nvidia.com/file: /etc/a", "data: {a.yaml: x}\n"),
			cm("two", "nemo-rl.nvidia.com/file: a.yaml", "data: {a.yaml: x, b.yaml: y}\n"),
			cm("both", "nemo-rl.nvidia.com/file: a.yaml, nemo-rl.nvidia.com/files-dir: .", "data: {a.yaml: x}\n"),
			cm("nested", "nemo-rl.nvidia.com/files-dir: .", "data: {a.yaml: {x: 1}}\n"),
			cm("list", "nemo-rl.nvidia.com/files-dir: .", "data: [a]\n"),
			cm("slash", "nemo-rl.nvidia.com/files-dir: d", "data: {a/b: x, ok: y}\n"),
			cm("base64", "nemo-rl.nvidia.com/files-dir: .", "binaryData: {a: '%%%'}\n"),
			cm("twice", "nemo-rl.nvidia.com/files-dir: .", "data: {a: x}\nbinaryData: {a: eA==}\n"),
		},
		files: map[string]string{"d/ok": "y"},
		results: []string{
			`[error] v1/ConfigMap/up metadata.annotations.nemo-rl.nvidia.com/files-dir: ConfigMap up: found "../x"; expected a slash path relative to the package root ("." for the root)`,
			`[error] v1/ConfigMap/abs metadata.annotations.nemo-rl.nvidia.com/file: ConfigMap abs: found "/etc/a"; expected a slash path relative to the package root ("." for the root)`,
			"[error] v1/ConfigMap/two data: ConfigMap two: annotated nemo-rl.nvidia.com/file: a.yaml holds 2 keys; expected exactly one (the file's content)",
			"[error] v1/ConfigMap/both metadata.annotations: ConfigMap both: has both nemo-rl.nvidia.com/files-dir and nemo-rl.nvidia.com/file; expected one of them",
			"[error] v1/ConfigMap/nested: ConfigMap nested: data: expected string keys and values",
			"[error] v1/ConfigMap/list: ConfigMap list: data: expected a mapping of file name to content",
			`[error] v1/ConfigMap/slash data.a/b: ConfigMap slash: key "a/b" is not a file name; expected the base name of a file in d`,
			"[error] v1/ConfigMap/base64: ConfigMap base64: binaryData.a: expected base64: illegal base64 data at input byte 0",
			"[error] v1/ConfigMap/twice: ConfigMap twice: binaryData.a: key given twice",
		}},
	{name: "run files: where each run's file is, the same path twice agreeing",
		items: []string{
			cm("w1", `nemo-rl.nvidia.com/run-files: "true"`, "data: {a: runs/./a.yaml, b: b.yaml}\n"),
			cm("w2", `nemo-rl.nvidia.com/run-files: "true"`, "data: {a: runs/a.yaml}\n"),
		},
		runFiles: map[string]string{"a": "runs/a.yaml", "b": "b.yaml"}},
	{name: "run files: a path out of the root, the root, a run given two paths",
		items: []string{
			cm("w1", `nemo-rl.nvidia.com/run-files: "true"`, "data: {a: ../a.yaml, b: ., c: c.yaml}\n"),
			cm("w2", `nemo-rl.nvidia.com/run-files: "true"`, "data: {c: d.yaml}\n"),
			cm("w3", `nemo-rl.nvidia.com/run-files: "true"`, "data: [x]\n"),
		},
		runFiles: map[string]string{"c": "c.yaml"},
		results: []string{
			`[error] v1/ConfigMap/w1 data.a: ConfigMap w1: found "../a.yaml"; expected the path of run a's file relative to the package root`,
			`[error] v1/ConfigMap/w1 data.b: ConfigMap w1: found "."; expected the path of run b's file relative to the package root`,
			"[error] v1/ConfigMap/w2 data.c: ConfigMap w2: run c's file is d.yaml here and c.yaml in another run-files ConfigMap; expected one",
			"[error] v1/ConfigMap/w3: ConfigMap w3: data: expected a mapping of file name to content",
		}},
	{name: "any version of our kind is a run; other kinds, other ConfigMaps and non-mappings pass through",
		items: []string{
			"apiVersion: nemo-rl.nvidia.com/v1beta9\nkind: NemoRLRun\nmetadata: {name: a}\n",
			"apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata: {name: b, annotations: {" + localConfig + "}}\n",
			"apiVersion: nemo-rl.nvidia.com\nkind: NemoRLRun\nmetadata: {name: c}\n",
			"apiVersion: example.com/v1\nkind: NemoRLRun\nmetadata: {name: theirs}\n",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {x: '1'}\n",
			"apiVersion: v2\nkind: ConfigMap\nmetadata: {name: v2, annotations: {nemo-rl.nvidia.com/files-dir: .}}\n",
			"- a\n",
		},
		runs:    []string{"NemoRLRun/a", "NemoRLRun/b", "NemoRLRun/c"},
		through: []string{"NemoRLRun/b", "NemoRLRun/theirs", "ConfigMap/plain", "ConfigMap/v2", "-"}},
}

// classify sorts items into files (path -> content), run files, runs and
// pass-through; a bad ConfigMap is a result naming it, its field and what
// is expected, and the others are still read.
func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		t.Run(tc.name, func(t *testing.T) {
			items := []*yaml.RNode{}
			for _, s := range tc.items {
				n, err := yaml.Parse(s)
				require.NoError(t, err)
				items = append(items, n)
			}
			in := classify(items)
			files := map[string]string{}
			for p, b := range in.files {
				files[p] = string(b)
			}
			if tc.files == nil {
				tc.files = map[string]string{}
			}
			require.Equal(t, tc.files, files)
			if tc.runFiles == nil {
				tc.runFiles = map[string]string{}
			}
			require.Equal(t, tc.runFiles, in.runFiles)
			require.Equal(t, tc.runs, itemIDs(in.runs))
			require.Equal(t, tc.through, itemIDs(in.passThrough))
			for _, n := range in.passThrough {
				require.Equal(t, isMapping(n) && (isRun(n) || isFiles(n) || isRunFiles(n)), in.consumed[n], "consumed: %s", identity(n))
			}
			var got []string
			for _, r := range in.results {
				got = append(got, r.String())
			}
			require.Equal(t, tc.results, got)
		})
	}
}

// What kustomize-inputs writes is what classify reads back; what could not
// be read back is refused.
func TestFilesConfigMap(t *testing.T) {
	cases := []struct {
		name, dir string
		files     map[string][]byte
		want      map[string]string
		err       string
	}{
		{"a directory", "profiles/./gb300/", map[string][]byte{"a.yaml": []byte("x: 1\n"), "b.yaml": nil},
			map[string]string{"profiles/gb300/a.yaml": "x: 1\n", "profiles/gb300/b.yaml": ""}, ""},
		{"the root", ".", map[string][]byte{"a": []byte("1")}, map[string]string{"a": "1"}, ""},
		{"a directory out of the root", "a/../..", nil, nil, `dir: found "a/../.."; expected a slash path relative to the package root`},
		{"a key not a base name", "d", map[string][]byte{"x/y": nil}, nil, `file "x/y": expected a base name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := FilesConfigMap("n", tc.dir, tc.files)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			where, err := RunFilesConfigMap("w", map[string]string{"run": "runs/r.yaml"})
			require.NoError(t, err)
			in := classify([]*yaml.RNode{n, where})
			require.Empty(t, in.results)
			got := map[string]string{}
			for p, b := range in.files {
				got[p] = string(b)
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, map[string]string{"run": "runs/r.yaml"}, in.runFiles)
			require.Equal(t, []string{"ConfigMap/n", "ConfigMap/w"}, itemIDs(in.passThrough), "local config")
		})
	}
}

// The words messages use for what was found: the input files listed (at
// most 20) and an item's kind.
func TestListFilesAndDescribe(t *testing.T) {
	many := manyFiles(25)
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"no files", (&inputs{}).listFiles(), "none"},
		{"a few, sorted", (&inputs{files: map[string][]byte{"b": nil, "a": nil}}).listFiles(), "a, b"},
		{"more than 20", (&inputs{files: many}).listFiles(), strings.Join(sortedNames(20), ", ") + " and 5 more"},
		{"no item", describe(nil), "none"},
		{"an item without apiVersion and kind", describe(yaml.MustParse("metadata: {name: x}\n")), "without apiVersion and kind"},
		{"an item", describe(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\n")), "v1 ConfigMap"},
	} {
		require.Equal(t, tc.want, tc.got, tc.name)
	}
}

// manyFiles is n empty files f00, f01, ...
func manyFiles(n int) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range sortedNames(n) {
		out[name] = nil
	}
	return out
}

func sortedNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, "f"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	return out
}
