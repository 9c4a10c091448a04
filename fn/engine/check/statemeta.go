package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// StateMetadata refuses vocab.StateAnnotation as a label or annotation
// anywhere in the objects the build made (an object's metadata, a pod
// template's, a claim template's), whatever input wrote it: the profile's
// annotations or labels, a kuberay role's, pod template metadata in its
// spec, a deployment's. The build's objects are where every road meets, so
// a road added later is held too. The state parameter (stateParam) is the
// one way to declare a run stopped, and it is what renders it stopped; the
// stopped form (manifest.Stop) adds the annotation after this gate. Each
// finding names where the profile (tree, file) writes it, else the object.
func StateMetadata(file string, prof *tree.Map, stateParam string, objs []any) diag.List {
	var reached []string
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			continue // emit reports an object it cannot write
		}
		if !bytes.Contains(b, stateKey) {
			continue // the common case, without decoding the object again
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		kind, _ := m["kind"].(string)
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		stateKeys(m, "", func(path string) { reached = append(reached, "output "+kind+"/"+name+" "+path) })
	}
	if len(reached) == 0 {
		return nil
	}
	sort.Strings(reached)
	msg := fmt.Sprintf("sets %s, which says a run's declared state (status, Argo CD's health check and the chart's upgrade guard show it): no input may write it; expected the state parameter (%s stopped), which renders the run stopped", vocab.StateAnnotation, stateParam)
	var ds diag.List
	written := profileStateKeys(prof, nil)
	if len(written) == 0 {
		for _, at := range reached {
			ds.Errorf(file, at, "%s", msg)
		}
		return ds
	}
	for _, at := range written {
		ds.Errorf(file, at, "%s; it reaches %s", msg, strings.Join(reached, ", "))
	}
	return ds
}

// stateKey is vocab.StateAnnotation as a JSON key.
var stateKey = []byte(`"` + vocab.StateAnnotation + `":`)

// metaKeys are the metadata maps a key is written in.
var metaKeys = []string{"annotations", "labels"}

// stateKeys calls found with the path of every metadata label or
// annotation named vocab.StateAnnotation in v, at any depth.
func stateKeys(v any, path string, found func(string)) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range tree.SortedKeys(t) {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if md, ok := t[k].(map[string]any); ok && k == "metadata" {
				for _, mk := range metaKeys {
					if kv, ok := md[mk].(map[string]any); ok {
						if _, set := kv[vocab.StateAnnotation]; set {
							found(sub + "." + mk + "." + vocab.StateAnnotation)
						}
					}
				}
			}
			stateKeys(t[k], sub, found)
		}
	case []any:
		for i, e := range t {
			stateKeys(e, path+"["+strconv.Itoa(i)+"]", found)
		}
	}
}

// profileStateKeys are the profile's paths that write
// vocab.StateAnnotation as a label or annotation, at any depth.
func profileStateKeys(v any, path []string) []string {
	var out []string
	switch t := v.(type) {
	case *tree.Map:
		for _, k := range t.Keys() {
			child, _ := t.Get(k)
			sub := append(append([]string(nil), path...), k)
			if k == vocab.StateAnnotation && len(path) > 0 && isMetaKey(path[len(path)-1]) {
				out = append(out, joinPath(sub))
				continue
			}
			out = append(out, profileStateKeys(child, sub)...)
		}
	case []any:
		for i, e := range t {
			out = append(out, profileStateKeys(e, append(append([]string(nil), path...), "["+strconv.Itoa(i)+"]"))...)
		}
	}
	return out
}

func isMetaKey(k string) bool { return k == "annotations" || k == "labels" }

// joinPath writes a profile path as findings name it: keys dotted, list
// indices in brackets ("kuberay.training.spec.workerGroupSpecs[0].template").
func joinPath(p []string) string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
