package kustomizeconf

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
)

// Files are the names File knows, as `nrl-k8s kustomize-config` takes them.
var Files = []string{"configuration", "openapi"}

// File is one of the two files by name: the transformer configuration, or
// the OpenAPI schema generated from the CRDs built into the binary (the
// bytes kustomize/ holds).
func File(name string) ([]byte, error) {
	switch name {
	case "configuration":
		return Configuration(), nil
	case "openapi":
		crds := map[string][]byte{}
		for _, k := range Kinds {
			b, err := schema.CRD(k.Kind)
			if err != nil {
				return nil, err
			}
			crds[k.Kind] = b
		}
		return OpenAPI(crds)
	}
	return nil, fmt.Errorf("unknown file %q; expected configuration or openapi", name)
}
