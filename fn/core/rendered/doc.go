// Package rendered is the rendered document: one Kubernetes object as plain
// data, its identity on a cluster, and a rendered stream read back. Every
// stage that reads rendered objects (check, the analysers, the front ends)
// shares this type; the emit stage writes it.
package rendered

// Doc is one object as plain data.
type Doc struct {
	Kind      string
	Name      string
	Namespace string
	Data      map[string]any
	// Obj is the typed object Data was encoded from (nil for a document
	// read back from YAML). Data, not Obj, is what is written: Obj lets a
	// check of the fresh render read the typed form without decoding Data
	// again, and is stale once anyone edits Data.
	Obj any
}

// FromData is the document of data, with kind, name and namespace read
// from it.
func FromData(data map[string]any) Doc {
	d := Doc{Data: data}
	d.Kind, _ = data["kind"].(string)
	if md, ok := data["metadata"].(map[string]any); ok {
		d.Name, _ = md["name"].(string)
		d.Namespace, _ = md["namespace"].(string)
	}
	return d
}
