package preflight

import (
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// ReadRendered reads the objects of rendered files (- is stdin), each
// within the size a rendered run may have: any rendered output, a
// committed manifest or helm template's. No object at all is an error.
func ReadRendered(stdin io.Reader, names []string) ([]rendered.Doc, error) {
	var docs []rendered.Doc
	for _, name := range names {
		data, err := readRendered(stdin, name)
		if err != nil {
			return nil, err
		}
		more, err := rendered.Decode(name, data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, more...)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no Kubernetes object found; expected rendered manifests", strings.Join(names, ", "))
	}
	return docs, nil
}

// readRendered reads a rendered file, or stdin for "-", within the size
// a rendered run may have.
func readRendered(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, source.MaxRenderSize+1))
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		if len(b) > source.MaxRenderSize {
			return nil, fmt.Errorf("stdin: over the %d-byte limit for rendered manifests", source.MaxRenderSize)
		}
		return b, nil
	}
	return source.ReadLimited(name, name, source.MaxRenderSize)
}
