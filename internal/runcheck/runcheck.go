// Package runcheck reads rendered streams back for tests: which objects a
// run has, their labels, and whether every name one object uses to reach
// another (DRA claims, ComputeDomain channels, cluster selectors) names an
// object of the stream. Tests of every entry point use it, so "a run is
// whole" means the same thing for the CLI, kustomize overlays and Helm.
package runcheck

import (
	"bytes"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Object is one document of a stream.
type Object struct {
	Kind, Name, Namespace string
	Labels                map[string]string
	Data                  map[string]any
}

// ID is kind/namespace/name.
func (o Object) ID() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// Parse splits a YAML stream ("---" separated, with or without Helm's
// "# Source:" comments) into objects.
func Parse(data []byte) ([]Object, error) {
	var out []Object
	for _, part := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		var m map[string]any
		if err := yaml.Unmarshal(part, &m); err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		md, _ := m["metadata"].(map[string]any)
		o := Object{Data: m, Labels: map[string]string{}}
		o.Kind, _ = m["kind"].(string)
		o.Name, _ = md["name"].(string)
		o.Namespace, _ = md["namespace"].(string)
		if ls, ok := md["labels"].(map[string]any); ok {
			for k, v := range ls {
				o.Labels[k] = fmt.Sprint(v)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// PodTemplates returns every pod template's labels of an object, keyed by
// a path.
func PodTemplates(o Object) map[string]map[string]string {
	out := map[string]map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if tpl, ok := t["template"].(map[string]any); ok {
				if _, hasSpec := tpl["spec"]; hasSpec {
					labels := map[string]string{}
					if md, ok := tpl["metadata"].(map[string]any); ok {
						if ls, ok := md["labels"].(map[string]any); ok {
							for k, v := range ls {
								labels[k] = fmt.Sprint(v)
							}
						}
					}
					out[path+".template"] = labels
				}
			}
			for k, c := range t {
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	if o.Kind == "Pod" {
		out["."] = o.Labels
		return out
	}
	walk("", o.Data["spec"])
	return out
}

// Images lists every container image of an object.
func Images(o Object) []string {
	var out []string
	var walk func(v any, inContainers bool)
	walk = func(v any, inContainers bool) {
		switch t := v.(type) {
		case map[string]any:
			if inContainers {
				if img, ok := t["image"].(string); ok {
					out = append(out, img)
				}
			}
			for k, c := range t {
				walk(c, k == "containers")
			}
		case []any:
			for _, c := range t {
				walk(c, inContainers)
			}
		}
	}
	walk(o.Data, false)
	return out
}

// Dangling lists every reference that names no object of objs in its
// namespace: resourceClaimTemplateName (a ResourceClaimTemplate, or the
// channel of a ComputeDomain), a ComputeDomain's channel (its own name),
// and a RayJob's clusterSelector (a RayCluster).
func Dangling(objs []Object) []string {
	have := map[string]bool{}
	for _, o := range objs {
		have[o.Kind+"/"+o.Namespace+"/"+o.Name] = true
		if o.Kind == "ComputeDomain" {
			if ch := str(o.Data, "spec", "channel", "resourceClaimTemplate", "name"); ch != "" {
				have["ResourceClaimTemplate/"+o.Namespace+"/"+ch] = true
			}
		}
	}
	var bad []string
	for _, o := range objs {
		var walk func(v any)
		walk = func(v any) {
			switch t := v.(type) {
			case map[string]any:
				if n, ok := t["resourceClaimTemplateName"].(string); ok && !have["ResourceClaimTemplate/"+o.Namespace+"/"+n] {
					bad = append(bad, fmt.Sprintf("%s: resourceClaimTemplateName %s", o.ID(), n))
				}
				for _, c := range t {
					walk(c)
				}
			case []any:
				for _, c := range t {
					walk(c)
				}
			}
		}
		walk(o.Data["spec"])
		switch o.Kind {
		case "ComputeDomain":
			if ch := str(o.Data, "spec", "channel", "resourceClaimTemplate", "name"); ch != o.Name {
				bad = append(bad, fmt.Sprintf("%s: channel %s is not the ComputeDomain's name", o.ID(), ch))
			}
		case "RayJob":
			if sel, ok := o.Data["spec"].(map[string]any)["clusterSelector"].(map[string]any); ok {
				n := fmt.Sprint(sel[vocab.RayClusterLabel])
				if !have["RayCluster/"+o.Namespace+"/"+n] {
					bad = append(bad, fmt.Sprintf("%s: clusterSelector %s=%s", o.ID(), vocab.RayClusterLabel, n))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[p]
	}
	s, _ := v.(string)
	return s
}
