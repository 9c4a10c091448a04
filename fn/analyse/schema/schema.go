// Package schema validates rendered objects against the API they are meant
// for, offline: custom resources (RayJob, RayCluster, ComputeDomain) against
// the openAPIV3Schema of their embedded CRD in the order and with the code
// the API server runs on a create (k8s.io/apiextensions-apiserver's
// structural schema and pruning, its defaulting algorithm, kube-openapi's
// OpenAPI validator, the CRD's CEL rules), built-in kinds against the
// k8s.io/api types plus the fields the API server requires. It backs
// `nrl-k8s check --strict` and the output tests; the CRDs are parsed on
// first use only. The real API server tier (tests/apiserver) is the last
// word; this is what can be known without one.
//
// Process start (docs/performance.md, "Process start"): every package linked into
// nrl-k8s runs its init in every process, and apiextensions-apiserver's
// validation, defaulting and CEL packages link CEL, the apiserver's feature
// gates and the component-base/prometheus metrics registries, which cost
// every render and version call about as much as the render itself. So this
// package links only the light upstream pieces (structural schema, pruning,
// kube-openapi's validator) and restates the rest in its own code:
// defaulting, the validation schema and the error wording (createpath.go),
// and the CRDs' CEL rules as Go (rules.go). tests/schema proves on every
// golden and on broken variants of them that it finds exactly what the
// upstream validator finds, and tests/startup keeps the heavy packages out.
package schema

import (
	"embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// crdFor maps apiVersion/kind to the file holding its CRD.
var crdFor = map[string]string{
	vocab.RayAPIVersion + "/RayJob":                  "crds/ray.io_rayjobs.yaml",
	vocab.RayAPIVersion + "/RayCluster":              "crds/ray.io_rayclusters.yaml",
	vocab.ComputeDomainAPIVersion + "/ComputeDomain": "crds/resource.nvidia.com_computedomains.yaml",
}

// CRD returns the embedded CustomResourceDefinition YAML of a kind this
// package knows (RayJob, RayCluster, ComputeDomain).
func CRD(kind string) ([]byte, error) {
	for key, file := range crdFor {
		if strings.HasSuffix(key, "/"+kind) {
			return crdFiles.ReadFile(file)
		}
	}
	return nil, fmt.Errorf("no embedded CRD for kind %s", kind)
}

// crdValidator is what the API server builds from one CRD version.
type crdValidator struct {
	structural *structuralschema.Structural
	schema     *validate.SchemaValidator
}

type loaded struct {
	once sync.Once
	v    *crdValidator
	err  error
}

var (
	cacheOnce sync.Once
	cache     map[string]*loaded
)

// validatorFor returns the validator for apiVersion/kind, building it on
// first use; ok is false for kinds without an embedded CRD.
func validatorFor(apiVersion, kind string) (v *crdValidator, ok bool, err error) {
	cacheOnce.Do(func() {
		cache = make(map[string]*loaded, len(crdFor))
		for k := range crdFor {
			cache[k] = &loaded{}
		}
	})
	key := apiVersion + "/" + kind
	l, ok := cache[key]
	if !ok {
		return nil, false, nil
	}
	l.once.Do(func() { l.v, l.err = build(crdFor[key], apiVersion, kind) })
	return l.v, true, l.err
}

func build(file, apiVersion, kind string) (*crdValidator, error) {
	data, err := crdFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	_, version, _ := strings.Cut(apiVersion, "/")
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		ss, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: not a structural schema: %w", file, err)
		}
		if err := checkRules(ss, kind); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return &crdValidator{structural: ss, schema: validate.NewSchemaValidator(validationSchema(ss), nil, "", strfmt.Default)}, nil
	}
	return nil, fmt.Errorf("%s: no version %s of %s", file, version, kind)
}

// Violation is one place where a document breaks its schema.
type Violation struct {
	Path string // JSON path inside the document, e.g. spec.entrypoint
	Msg  string
}

// check runs, on a copy of obj, what the API server runs on a create:
// unknown fields (pruning), defaulting, OpenAPI validation, CEL rules.
func (v *crdValidator) check(obj map[string]any) []Violation {
	u := runtime.DeepCopyJSON(normalise(obj).(map[string]any))
	var out []Violation
	for _, p := range structuralpruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		out = append(out, Violation{Path: p, Msg: "unknown field; not in the CRD schema (the API server drops it, or refuses it under strict field validation)"})
	}
	fillDefaults(u, v.structural)
	errs := fieldErrors(v.schema.Validate(u))
	errs = append(errs, evalRules(nil, u, v.structural)...)
	for _, e := range errs {
		path := e.Field
		if path == "<nil>" { // an error about the whole object
			path = ""
		}
		out = append(out, Violation{Path: path, Msg: e.ErrorBody()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func join(p, k string) string {
	if k == "" {
		return p
	}
	if p == "" {
		return k
	}
	return p + "." + k
}

// Validate checks every document; errors name file, object and field.
func Validate(file string, docs []rendered.Doc) diag.List {
	var ds diag.List
	for _, d := range docs {
		where := fmt.Sprintf("output %s/%s", d.Kind, d.Name)
		apiVersion, _ := d.Data["apiVersion"].(string)
		v, ok, err := validatorFor(apiVersion, d.Kind)
		if err != nil {
			ds.Errorf(file, where, "cannot read the embedded CRD: %v", err)
			continue
		}
		var vs []Violation
		switch {
		case ok:
			vs = v.check(d.Data)
		default:
			var known bool
			vs, known = checkBuiltin(apiVersion, d.Kind, d.Data)
			if !known {
				ds.Errorf(file, where, "no schema for %s %s; expected one of the kinds nrl-k8s renders", apiVersion, d.Kind)
				continue
			}
		}
		for _, v := range vs {
			ds.Errorf(file, join(where, v.Path), "%s", v.Msg)
		}
	}
	return ds
}

// normalise turns Go ints into the int64 JSON decoding would give, which is
// what the validators expect.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e)
		}
		return out
	case int:
		return int64(t)
	case int32:
		return int64(t)
	}
	return v
}
