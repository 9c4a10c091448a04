// Package emit writes rendered objects as a deterministic YAML stream: typed
// object → JSON → plain data with the encoder's zero-value noise removed →
// YAML with sorted keys, documents in Helm's install order. The Helm chart
// ends with the same `toYaml`, which is what makes the two byte-identical.
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// Doc is one object as plain data.
type Doc struct {
	Kind      string
	Name      string
	Namespace string
	Data      map[string]any
}

// Convert turns typed objects into documents, in install order.
func Convert(objs []any) ([]Doc, error) {
	docs := make([]Doc, 0, len(objs))
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
func ToDoc(o any) (Doc, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return Doc{}, fmt.Errorf("encode %T: %w", o, err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		return Doc{}, fmt.Errorf("decode %T: %w", o, err)
	}
	delete(data, "status")
	Prune(data)
	d := Doc{Data: data}
	d.Kind, _ = data["kind"].(string)
	if md, ok := data["metadata"].(map[string]any); ok {
		d.Name, _ = md["name"].(string)
		d.Namespace, _ = md["namespace"].(string)
	}
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

// kindOrder is Helm's install order (releaseutil.InstallOrder) for the kinds
// we emit; kinds Helm does not know follow, alphabetically. Using Helm's
// order everywhere keeps `helm template` and `nrl-k8s render` identical.
var kindOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
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
func Order(docs []Doc) {
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

// Marshal writes one document as YAML: exactly the bytes
// sigs.k8s.io/yaml.Marshal (Helm's toYaml) writes for d.Data, sorted keys
// included. That function encodes to JSON, has yaml.v2 parse the JSON back
// and encodes the result with yaml.v2; the data here is already what a
// JSON decode gives, so only its numbers need yaml.v2's reading of their
// JSON text (yamlValue), and the encoding is the same yaml.v2 call. The
// round trip was a third of a render's time. Data the shortcut does not
// cover (other types; strings the round trip would change or refuse, see
// readsBack) takes the round trip itself, so the two never differ.
func Marshal(d Doc) ([]byte, error) {
	if v, ok := yamlValue(d.Data); ok {
		return yamlv2.Marshal(v)
	}
	return yaml.Marshal(d.Data)
}

// yamlValue is v as yaml.v2 decodes v's JSON encoding, for the values a
// JSON decode into any produces; ok is false for anything else.
func yamlValue(v any) (any, bool) {
	switch t := v.(type) {
	case nil, bool:
		return t, true
	case string:
		return t, readsBack(t)
	case float64:
		return jsonNumber(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var ok bool
			if out[i], ok = yamlValue(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			c, ok := yamlValue(e)
			if !ok || !readsBack(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	}
	return nil, false
}

// readsBack reports whether s survives the round trip unchanged: valid
// UTF-8 (encoding/json rewrites invalid bytes) and none of the characters
// yaml.v2's reader refuses ("control characters are not allowed") that
// JSON leaves unescaped: U+007F to U+009F except U+0085, U+FFFE, U+FFFF.
func readsBack(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf && s[i] != 0x7f {
			continue
		}
		for _, r := range s[i:] {
			switch {
			case r == utf8.RuneError || r == 0xFFFE || r == 0xFFFF:
				return false // invalid bytes, or a real U+FFFD (rare): the round trip handles both
			case r >= 0x7f && r <= 0x9f && r != 0x85:
				return false
			}
		}
		return utf8.ValidString(s[i:])
	}
	return true
}

// jsonNumber is what yaml.v2 makes of encoding/json's text for f: an int
// when the text parses as one, else a uint64, else a float64 (yaml.v2's
// resolve, in that order). NaN and infinities have no JSON form.
func jsonNumber(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, false
	}
	s := string(b)
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		if i == int64(int(i)) {
			return int(i), true
		}
		return i, true
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u, true
	}
	if g, err := strconv.ParseFloat(s, 64); err == nil {
		return g, true
	}
	return nil, false
}

// Stream writes documents, each introduced by `---`.
func Stream(docs []Doc) ([]byte, error) {
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
