package krm

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Execute is `nrl-k8s fn`: framework.Execute's steps (read, annotation
// bookkeeping, process, results, write) with one change. The documents we
// render are written as the bytes `nrl-k8s render` prints, indented into
// the list, instead of being parsed into yaml nodes and encoded again: that
// round trip was half of the function's time and most of its memory for
// many runs (docs/performance.md). Everything else, the items passing
// through, the function config and the results, goes through kyaml's
// writer as before.
//
// rw.Style must be zero: rendered block text cannot go into a flow-style
// (JSON) list. Nothing in nrl-k8s sets it; kyaml's reader does not either.
func Execute(rw *kio.ByteReadWriter) error { return ExecuteTo(rw, nil) }

// ExecuteTo is Execute that also writes the findings of a successful run
// (warnings, infos) to log, one per line: kustomize shows an exec
// function's stderr but never its results, so without this a warning such
// as "6 nodes will sit idle" would not reach a kustomize user. A failing
// run's findings are the returned error, which the caller prints.
func ExecuteTo(rw *kio.ByteReadWriter, log io.Writer) error {
	return ExecuteWith(rw, log, Options{})
}

// ExecuteWith is ExecuteTo with the generator mode's options.
func ExecuteWith(rw *kio.ByteReadWriter, log io.Writer, opts Options) error {
	if rw.Style != 0 {
		return fmt.Errorf("krm.Execute writes block-style YAML; ByteReadWriter.Style must be 0")
	}
	items, err := rw.Read()
	if err != nil {
		return fmt.Errorf("failed to read ResourceList input: %w", err)
	}
	original, err := kio.PreprocessResourcesForInternalAnnotationMigration(items)
	if err != nil {
		return err
	}
	keys, err := pathKeysFor(original, rw.KeepReaderAnnotations)
	if err != nil {
		return err
	}
	out := renderList(items, rw.FunctionConfig, keys, opts)
	if err := kio.ReconcileInternalAnnotations(out.items, original); err != nil {
		return err
	}
	// Results are only written into a list (a plain stream, the kustomize
	// plugin's, has no place for them): encoding a thousand findings for
	// nothing was a tenth of the plugin's time.
	if len(out.results) > 0 && wraps(rw) {
		if rw.Results, err = resultsNode(out.results); err != nil {
			return err
		}
	}
	if err := writeSpliced(rw, out.items, out.docs); err != nil {
		return err
	}
	if out.results.ExitCode() != 0 || (opts.FailOnWarning && hasWarning(out.results)) {
		return out.results
	}
	if log != nil {
		for _, r := range out.results {
			fmt.Fprintln(log, "nrl-k8s fn: "+r.String())
		}
	}
	return nil
}

// wraps says whether rw writes its items into a list (a ResourceList),
// as kio.ByteReadWriter.Write decides it, or as a plain document stream.
func wraps(rw *kio.ByteReadWriter) bool { return rw.WrappingKind != "" && !rw.NoWrap }

func hasWarning(results Results) bool {
	for _, r := range results {
		if r.Severity == SeverityWarning {
			return true
		}
	}
	return false
}

// resultsNode is ResourceList.results as kyaml's framework.Execute
// encodes them.
func resultsNode(results Results) (*yaml.RNode, error) {
	b, err := yaml.Marshal(results)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(b))
}

// pathKeysFor is the subset of the path and index annotations a new item
// ends up with after kio.ReconcileInternalAnnotations (the forms the input
// used) and the writer (no index annotations when reader annotations are
// not kept). It asks kio itself, on a probe item carrying all four, so the
// rule stays kyaml's.
func pathKeysFor(original map[string]map[string]string, keepReaderAnnotations bool) ([]string, error) {
	probe := yaml.NewMapRNode(nil)
	if err := probe.SetAnnotations(map[string]string{
		allPathKeys[0]: "p", allPathKeys[1]: "0", allPathKeys[2]: "p", allPathKeys[3]: "0",
	}); err != nil {
		return nil, err
	}
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{probe}, original); err != nil {
		return nil, err
	}
	kept := probe.GetAnnotations()
	var keys []string
	for _, k := range allPathKeys {
		if _, ok := kept[k]; !ok {
			continue
		}
		if !keepReaderAnnotations && (k == allPathKeys[1] || k == allPathKeys[3]) {
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// writeSpliced has kyaml write the list with one placeholder item after
// the passing items, then puts the documents where the placeholder is.
// The placeholder is random, so no input can contain it; it must occur
// exactly where the stub is or nothing is written.
func writeSpliced(rw *kio.ByteReadWriter, items []*yaml.RNode, docs []document) error {
	if len(docs) == 0 {
		return rw.Write(items)
	}
	token, err := placeholder()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := rw.Writer
	rw.Writer = &buf
	// A mapping: kyaml's writer reads every item's annotations.
	stub := yaml.NewMapRNode(&map[string]string{token: token})
	err = rw.Write(append(slices.Clip(items), stub))
	rw.Writer = w
	if err != nil {
		return err
	}
	text := buf.Bytes()
	wrapped := wraps(rw)
	var mark []byte
	if wrapped {
		mark = []byte("- " + token + ": " + token + "\n")
	} else {
		mark = []byte(token + ": " + token + "\n")
	}
	at := bytes.Index(text, mark)
	if at < 0 || bytes.Count(text, []byte(token)) != 2 || (at > 0 && text[at-1] != '\n') {
		return fmt.Errorf("internal error: the output list has no single place for the rendered documents")
	}
	var spliced bytes.Buffer
	spliced.Grow(len(text) + docsSize(docs))
	spliced.Write(text[:at])
	for i, d := range docs {
		if wrapped {
			writeItem(&spliced, d.data)
			continue
		}
		if i > 0 {
			spliced.WriteString("---\n")
		}
		spliced.Write(d.data)
	}
	spliced.Write(text[at+len(mark):])
	_, err = io.Copy(w, &spliced)
	return err
}

func docsSize(docs []document) int {
	n := 0
	for _, d := range docs {
		n += len(d.data) + len(d.data)/16 // room for the indentation
	}
	return n
}

// writeItem writes a block-style YAML document as a list item: "- " before
// its first line and two spaces before every other non-empty line, which
// is how yaml encoders nest a mapping in a list. Indenting every line
// alike keeps block scalars' content: their indentation is relative.
func writeItem(w *bytes.Buffer, doc []byte) {
	first := true
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = nil
		}
		switch {
		case first:
			w.WriteString("- ")
			first = false
		case line[0] != '\n':
			w.WriteString("  ")
		}
		w.Write(line)
	}
	if w.Len() > 0 && w.Bytes()[w.Len()-1] != '\n' {
		w.WriteByte('\n')
	}
}

func placeholder() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "nrl-k8s-rendered-documents-" + hex.EncodeToString(b), nil
}
