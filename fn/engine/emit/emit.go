// Package emit writes rendered objects as a deterministic YAML stream: typed
// object → JSON → plain data with the encoder's zero-value noise removed →
// YAML with sorted keys, documents in Helm's install order. The Helm chart
// ends with the same `toYaml`, which is what makes the two byte-identical.
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// Convert turns typed objects into documents, in install order.
func Convert(objs []any) ([]rendered.Doc, error) {
	docs := make([]rendered.Doc, 0, len(objs))
	for _, o := range objs {
		d, err := ToDoc(o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	Order(docs)
	return docs, nil
}

// ToDoc converts one typed object.
func ToDoc(o any) (rendered.Doc, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return rendered.Doc{}, fmt.Errorf("encode %T: %w", o, err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		return rendered.Doc{}, fmt.Errorf("decode %T: %w", o, err)
	}
	delete(data, "status")
	Prune(data)
	d := rendered.FromData(data)
	d.Obj = o
	return d, nil
}

// noiseWhenEmpty are fields the Go types always encode (struct values, not
// pointers) whose empty form `{}` means "not set". A user's `emptyDir: {}` is
// a pointer and so is kept: only these names are dropped when empty.
var noiseWhenEmpty = map[string]bool{
	"metadata":      true,
	"resources":     true,
	"scaleStrategy": true,
	"strategy":      true,
	"status":        true,
	"rayJobInfo":    true,
}

// Prune removes nulls (unset pointers, maps and slices that the types
// encode without omitempty) and the empty struct values listed above.
func Prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if child == nil {
				delete(t, k)
				continue
			}
			Prune(child)
			if m, ok := child.(map[string]any); ok && len(m) == 0 && noiseWhenEmpty[k] {
				delete(t, k)
			}
		}
	case []any:
		for _, e := range t {
			Prune(e)
		}
	}
}

// kindOrder is Helm v3.21.4's install order (releaseutil.InstallOrder);
// kinds Helm does not know follow, alphabetically, as in Helm. Using Helm's
// order everywhere keeps `helm template` and `nrl-k8s render` identical.
// A copy, not an import: releaseutil imports chartutil, which imports
// client-go's scheme, whose package init costs every nrl-k8s process about
// 8 ms (GODEBUG=inittrace=1). TestKindOrderIsHelms holds it equal to the
// pinned Helm's list.
var kindOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService",
}

var kindRank = func() map[string]int {
	m := map[string]int{}
	for i, k := range kindOrder {
		m[k] = i
	}
	return m
}()

// Order sorts documents as Helm does: known kinds by rank, unknown kinds
// after them by name, render order kept within a kind.
func Order(docs []rendered.Doc) {
	sort.SliceStable(docs, func(i, j int) bool {
		a, b := docs[i].Kind, docs[j].Kind
		ra, oka := kindRank[a]
		rb, okb := kindRank[b]
		switch {
		case oka && okb:
			return ra < rb
		case oka:
			return true
		case okb:
			return false
		default:
			return a < b
		}
	})
}

// Marshal writes one document as YAML with sigs.k8s.io/yaml.Marshal,
// Helm's toYaml: the function that makes the chart and the CLI byte-identical.
func Marshal(d rendered.Doc) ([]byte, error) {
	return yaml.Marshal(d.Data)
}

// Stream writes documents, each introduced by `---`.
func Stream(docs []rendered.Doc) ([]byte, error) {
	var buf bytes.Buffer
	for _, d := range docs {
		b, err := Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", d.Kind, d.Name, err)
		}
		buf.WriteString("---\n")
		buf.Write(bytes.TrimRight(b, "\n"))
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// List writes documents as kubectl's JSON form of several objects (a v1
// List, `render -o json`): indented, keys sorted, HTML left unescaped.
func List(docs []rendered.Doc) ([]byte, error) {
	items := make([]any, len(docs))
	for i, d := range docs {
		items[i] = d.Data
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
