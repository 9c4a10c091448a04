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
// committed manifest or helm template's. No object at all is an error, and
// so is an object that does not decode as its kind, named with its file.
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
		if err := decodes(more); err != nil {
			if name == "-" {
				name = "stdin"
			}
			return nil, fmt.Errorf("%s: %w", name, err)
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

// decodes reads one file's objects as InputOf will read them all (pods,
// claims, references), so an object of the wrong shape is refused with
// the file it came from, which the objects do not carry.
func decodes(docs []rendered.Doc) error {
	if _, _, err := PodShapes(docs); err != nil {
		return err
	}
	if _, err := ClaimRequests(docs); err != nil {
		return err
	}
	_, _, err := needsOf(docs)
	return err
}
