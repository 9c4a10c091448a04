package rendered

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode reads a rendered stream back into documents: any multi-document
// YAML of Kubernetes objects (our own output, a committed manifest,
// `helm template`). A v1 List (`render -o json`) is flattened into its
// items. Empty and comment-only documents are skipped; file names the
// input in errors.
func Decode(file string, data []byte) ([]Doc, error) {
	var docs []Doc
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for idx := 1; ; idx++ {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, idx, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w; expected a Kubernetes object", file, idx, err)
		}
		if len(obj) == 0 {
			continue
		}
		objs := []map[string]any{obj}
		if obj["kind"] == "List" {
			objs = objs[:0]
			items, _ := obj["items"].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					objs = append(objs, m)
				}
			}
		}
		for _, o := range objs {
			d := FromData(o)
			if d.Kind == "" || d.Name == "" {
				return nil, fmt.Errorf("%s: document %d: kind and metadata.name are required; found kind %q, name %q", file, idx, d.Kind, d.Name)
			}
			docs = append(docs, d)
		}
	}
}
