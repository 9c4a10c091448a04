package krm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Input files travel as ConfigMaps, the shape kustomize's configMapGenerator
// makes from files a user already has (data key = file name, value = the
// file), so recipes are used without editing them. An annotation
// (vocab.FilesDirAnnotation, vocab.FileAnnotation) says where the files
// live, because a ConfigMap keeps only base names and a recipe's
// `defaults:` chain is made of relative paths. vocab.RunFilesAnnotation
// marks the ConfigMap that says where each run's file is: a run's paths are
// relative to its file, and kustomize passes a transformer's items and
// config without their file paths (kpt and the generator mode do pass
// them). kustomize-inputs writes it.

// inputs is a ResourceList's items sorted into what Process uses.
type inputs struct {
	files       source.Memory
	disk        source.Source     // generator mode: files no ConfigMap carries
	runFiles    map[string]string // run name -> its file, from a run-files ConfigMap
	from        map[string]string // file path -> the ConfigMap that gave it
	runs        []*yaml.RNode
	passThrough []*yaml.RNode
	// consumed are the NemoRLRuns and file ConfigMaps kept as local config.
	consumed map[*yaml.RNode]bool
	results  Results
}

// classify splits items into file ConfigMaps and NemoRLRuns (both
// consumed) and everything else (passed through untouched).
func classify(items []*yaml.RNode) *inputs {
	in := &inputs{files: source.Memory{}, from: map[string]string{}, runFiles: map[string]string{}, consumed: map[*yaml.RNode]bool{}}
	for _, n := range items {
		switch {
		case !isMapping(n):
			in.passThrough = append(in.passThrough, n)
		case isRun(n):
			in.runs = append(in.runs, n)
			in.keepLocal(n)
		case isFiles(n):
			in.addFiles(n)
			in.keepLocal(n)
		case isRunFiles(n):
			in.addRunFiles(n)
			in.keepLocal(n)
		default:
			in.passThrough = append(in.passThrough, n)
		}
	}
	return in
}

// keepLocal keeps a consumed item that is local config: under kpt it is a
// file of the package (a function that drops an item deletes its file), and
// kustomize drops local config from its output by itself. A consumed item
// that is not local config is removed, so inputs never reach a cluster.
func (in *inputs) keepLocal(n *yaml.RNode) {
	if annotations(n)[vocab.LocalConfigAnnotation] == "true" {
		in.passThrough = append(in.passThrough, n)
		in.consumed[n] = true
	}
}

// isMapping guards every later look at an item: a document node without
// content or a scalar document would make kyaml's accessors panic.
func isMapping(n *yaml.RNode) bool {
	if n == nil {
		return false
	}
	doc := n.Document()
	if doc == nil || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
		return false
	}
	return n.YNode() != nil && n.YNode().Kind == yaml.MappingNode
}

// isRun: any version of our group's kind is ours, so a wrong apiVersion is
// reported by runspec instead of being passed through silently.
func isRun(n *yaml.RNode) bool {
	if !isMapping(n) || n.GetKind() != runspec.Kind {
		return false
	}
	av := n.GetApiVersion()
	return av == vocab.Group || strings.HasPrefix(av, vocab.Group+"/")
}

func isFiles(n *yaml.RNode) bool {
	if n.GetKind() != "ConfigMap" || n.GetApiVersion() != "v1" {
		return false
	}
	a := annotations(n)
	_, dir := a[vocab.FilesDirAnnotation]
	_, file := a[vocab.FileAnnotation]
	return dir || file
}

func isRunFiles(n *yaml.RNode) bool {
	return n.GetKind() == "ConfigMap" && n.GetApiVersion() == "v1" && annotations(n)[vocab.RunFilesAnnotation] == "true"
}

// addRunFiles records where each run's file is. A run named twice with two
// paths is an error: which directory its paths start from would be a
// guess.
func (in *inputs) addRunFiles(n *yaml.RNode) {
	ref := refOf(n)
	data, err := dataOf(n)
	fail := func(field, format string, args ...any) {
		in.results = append(in.results, &Result{Severity: SeverityError, ResourceRef: ref,
			File: fileRef(fileOf(n)), Field: fieldRef(field), Message: fmt.Sprintf("ConfigMap %s: ", ref.Name) + fmt.Sprintf(format, args...)})
	}
	if err != nil {
		fail("", "%v", err)
		return
	}
	for _, name := range tree.SortedKeys(data) {
		p, err := cleanRel(string(data[name]))
		if err != nil || p == "." {
			fail("data."+name, "found %q; expected the path of run %s's file relative to the package root", string(data[name]), name)
			continue
		}
		if prev, ok := in.runFiles[name]; ok && prev != p {
			fail("data."+name, "run %s's file is %s here and %s in another run-files ConfigMap; expected one", name, p, prev)
			continue
		}
		in.runFiles[name] = p
	}
}

func annotations(n *yaml.RNode) map[string]string {
	m, err := n.GetMeta()
	if err != nil {
		return nil
	}
	return m.Annotations
}

// addFiles records the files of one ConfigMap; problems become results
// naming the ConfigMap and the offending key.
func (in *inputs) addFiles(n *yaml.RNode) {
	ref := refOf(n)
	file := fileOf(n)
	fail := func(field, format string, args ...any) {
		in.results = append(in.results, &Result{Severity: SeverityError, ResourceRef: ref,
			File: fileRef(file), Field: fieldRef(field), Message: fmt.Sprintf("ConfigMap %s: ", ref.Name) + fmt.Sprintf(format, args...)})
	}
	a := annotations(n)
	dir, isDir := a[vocab.FilesDirAnnotation]
	single, isSingle := a[vocab.FileAnnotation]
	if isDir && isSingle {
		fail("metadata.annotations", "has both %s and %s; expected one of them", vocab.FilesDirAnnotation, vocab.FileAnnotation)
		return
	}
	data, err := dataOf(n)
	if err != nil {
		fail("", "%v", err)
		return
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if isSingle {
		if len(keys) != 1 {
			fail("data", "annotated %s: %s holds %d keys; expected exactly one (the file's content)", vocab.FileAnnotation, single, len(keys))
			return
		}
		p, err := cleanRel(single)
		if err != nil {
			fail("metadata.annotations."+vocab.FileAnnotation, "%v", err)
			return
		}
		in.add(p, data[keys[0]], ref.Name, fail, "data."+keys[0])
		return
	}
	d, err := cleanRel(dir)
	if err != nil {
		fail("metadata.annotations."+vocab.FilesDirAnnotation, "%v", err)
		return
	}
	for _, k := range keys {
		if k == "" || strings.Contains(k, "/") || k == "." || k == ".." {
			fail("data."+k, "key %q is not a file name; expected the base name of a file in %s", k, d)
			continue
		}
		in.add(path.Join(d, k), data[k], ref.Name, fail, "data."+k)
	}
}

// add records one file. The same path from two ConfigMaps is fine when the
// content agrees (overlapping generators) and an error when it does not,
// since which one a recipe would see would be a guess.
func (in *inputs) add(p string, content []byte, cm string, fail func(string, string, ...any), field string) {
	if prev, ok := in.files[p]; ok {
		if !bytes.Equal(prev, content) {
			fail(field, "file %s is also in ConfigMap %s with different content; expected one version of each file", p, in.from[p])
		}
		return
	}
	in.files[p] = content
	in.from[p] = cm
}

// dataOf reads data and binaryData (kustomize puts files that are not
// UTF-8 there) without kyaml helpers that assume a well-formed ConfigMap.
func dataOf(n *yaml.RNode) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, field := range []string{yaml.DataField, yaml.BinaryDataField} {
		f := n.Field(field)
		if f == nil || f.Value.IsNil() || f.Value.YNode().Tag == yaml.NodeTagNull {
			continue
		}
		m := f.Value.YNode()
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: expected a mapping of file name to content", field)
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: expected string keys and values", field)
			}
			b := []byte(v.Value)
			if field == yaml.BinaryDataField {
				dec, err := base64.StdEncoding.DecodeString(v.Value)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: expected base64: %w", field, k.Value, err)
				}
				b = dec
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("%s.%s: key given twice", field, k.Value)
			}
			out[k.Value] = b
		}
	}
	return out, nil
}

// cleanRel cleans a package-relative slash path; an absolute path or one
// leaving the root could never match a NemoRLRun path and is a mistake.
func cleanRel(p string) (string, error) {
	c := path.Clean(strings.TrimSpace(p))
	if p == "" || path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("found %q; expected a slash path relative to the package root (\".\" for the root)", p)
	}
	return c, nil
}

func (in *inputs) listFiles() string {
	names := in.files.Names()
	if len(names) == 0 {
		return "none"
	}
	const shown = 20
	if len(names) > shown {
		return strings.Join(names[:shown], ", ") + fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return strings.Join(names, ", ")
}

func refOf(n *yaml.RNode) *yaml.ResourceIdentifier {
	m, _ := n.GetMeta()
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: m.APIVersion, Kind: m.Kind},
		NameMeta: yaml.NameMeta{Name: m.Name, Namespace: m.Namespace},
	}
}

// fileOf is the path annotation of an item ("" for none).
func fileOf(n *yaml.RNode) string {
	if !isMapping(n) {
		return ""
	}
	p, _, _ := kioutil.GetFileAnnotations(n)
	return p
}

func identity(n *yaml.RNode) string {
	if !isMapping(n) {
		return ""
	}
	r := refOf(n)
	return r.APIVersion + "|" + r.Kind + "|" + r.Namespace + "|" + r.Name
}

func describe(n *yaml.RNode) string {
	if !isMapping(n) {
		return "none"
	}
	r := refOf(n)
	if r.APIVersion == "" && r.Kind == "" {
		return "without apiVersion and kind"
	}
	return r.APIVersion + " " + r.Kind
}

// FilesConfigMap builds the input ConfigMap for files in dir (a slash path
// relative to the package root), marked local config: what a kpt package
// commits, and what kustomize's configMapGenerator makes with the options
// shown in docs/krm.md. files maps base names to contents.
func FilesConfigMap(name, dir string, files map[string][]byte) (*yaml.RNode, error) {
	d, err := cleanRel(dir)
	if err != nil {
		return nil, fmt.Errorf("dir: %w", err)
	}
	n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + strconvQuote(name) + "\n")
	if err != nil {
		return nil, err
	}
	if err := n.SetAnnotations(map[string]string{
		vocab.LocalConfigAnnotation: "true",
		vocab.FilesDirAnnotation:    d,
	}); err != nil {
		return nil, err
	}
	data := map[string]string{}
	for k, v := range files {
		if k == "" || strings.Contains(k, "/") {
			return nil, fmt.Errorf("file %q: expected a base name", k)
		}
		data[k] = string(v)
	}
	// Not SetDataMap: it calls log.Fatal on failure.
	if err := n.LoadMapIntoConfigMapData(data); err != nil {
		return nil, err
	}
	return n, nil
}

// RunFilesConfigMap is the local-config ConfigMap saying where each run's
// file is (run name -> slash path relative to the package root).
func RunFilesConfigMap(name string, runFiles map[string]string) (*yaml.RNode, error) {
	n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + strconvQuote(name) + "\n")
	if err != nil {
		return nil, err
	}
	if err := n.SetAnnotations(map[string]string{vocab.LocalConfigAnnotation: "true", vocab.RunFilesAnnotation: "true"}); err != nil {
		return nil, err
	}
	if err := n.LoadMapIntoConfigMapData(runFiles); err != nil {
		return nil, err
	}
	return n, nil
}

// strconvQuote quotes a name for the YAML template (JSON strings are YAML).
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
