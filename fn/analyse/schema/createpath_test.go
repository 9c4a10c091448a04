package schema

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	kubevalidate "k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// tests/schema holds createpath.go equal to upstream on the real CRDs; this
// test reaches the corners those CRDs do not have (defaults of defaults,
// forbidden nulls in maps and lists, formats on every type, every error
// code), again against the upstream packages, linked here in a test only.
const cornerSchema = `
type: object
required: [name]
properties:
  name: {type: string, maxLength: 3}
  mode: {type: string, enum: [a, b]}
  level: {type: integer, enum: [1, 2]}
  tags: {type: array, maxItems: 1, items: {type: string, format: k8s-short-name, default: dflt}}
  labels: {type: object, maxProperties: 1, additionalProperties: {type: string, default: none}}
  loose: {type: object, additionalProperties: {type: string, nullable: true, default: kept}}
  port: {x-kubernetes-int-or-string: true, format: int32}
  when: {type: string, format: date-time}
  whenNoDash: {type: string, format: datetime}
  uid: {type: string, format: uuid}
  odd: {type: string, format: not-a-format}
  count: {type: integer, format: int32, minimum: 0}
  width: {type: integer, format: int-32}
  big: {type: integer, format: int64}
  wide: {type: number, format: double}
  list: {type: array, format: uuid, items: {type: string}}
  ratio: {type: number, format: float}
  wrongWidth: {type: number, format: int64}
  flag: {type: boolean, format: byte}
  host: {type: string, format: hostname, pattern: '^[a-z.]+$'}
  nested:
    type: object
    default: {}
    properties:
      inner: {type: string, default: deep}
      opt: {type: string, nullable: true, default: dn}
      req: {type: string, default: r}
`

func cornerStructural(t *testing.T) (*structuralschema.Structural, *apiextensions.JSONSchemaProps) {
	t.Helper()
	var v1 apiextensionsv1.JSONSchemaProps
	require.NoError(t, yaml.Unmarshal([]byte(cornerSchema), &v1))
	var props apiextensions.JSONSchemaProps
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &props, nil))
	ss, err := structuralschema.NewStructural(&props)
	require.NoError(t, err)
	return ss, &props
}

func TestFillDefaultsIsUpstreams(t *testing.T) {
	ss, _ := cornerStructural(t)
	for _, doc := range []string{
		`{}`,
		`{"nested": null}`,
		`{"nested": {"opt": null, "req": null}}`,
		`{"tags": [null, "x"], "labels": {"a": null, "b": "c"}, "loose": {"a": null}}`,
		`{"tags": null, "labels": null}`,
	} {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		want := runtime.DeepCopyJSON(obj)
		structuraldefaulting.Default(want, ss)
		fillDefaults(obj, ss)
		require.Equal(t, want, obj, doc)
	}
	// A sample that must change, so the comparison above is not of no-ops.
	obj := map[string]any{"nested": nil}
	fillDefaults(obj, ss)
	require.Equal(t, map[string]any{"nested": map[string]any{"inner": "deep", "opt": "dn", "req": "r"}}, obj)
}

func TestValidationSchemaIsUpstreams(t *testing.T) {
	ss, props := cornerStructural(t)
	_, want, err := validation.NewSchemaValidator(props)
	require.NoError(t, err)
	got := validationSchema(ss)
	for name, w := range want.Properties {
		g := got.Properties[name]
		require.Equal(t, w.Type, g.Type, name)
		require.Equal(t, w.Format, g.Format, name)
	}
	require.Equal(t, "", got.Properties["odd"].Format, "an unchecked format is dropped")
	require.Equal(t, "k8s-short-name", got.Properties["tags"].Items.Schema.Format)
	require.Equal(t, spec.StringOrArray{"integer", "string"}, got.Properties["port"].Type)
}

func TestFieldErrorsAreUpstreams(t *testing.T) {
	ss, props := cornerStructural(t)
	upstream, _, err := validation.NewSchemaValidator(props)
	require.NoError(t, err)
	ours := kubevalidate.NewSchemaValidator(validationSchema(ss), nil, "", strfmt.Default)
	var all []string
	for _, doc := range []string{
		`{"name": "ok"}`,
		`{}`,
		`{"name": "long"}`,
		`{"name": "a", "mode": "c", "level": 3}`,
		`{"name": "a", "tags": ["a", "b"], "labels": {"a": "1", "b": "2"}}`,
		`{"name": "a", "count": -1, "flag": "yes", "port": [1]}`,
		`{"name": "a", "when": "yesterday", "whenNoDash": "today", "uid": "u", "host": "UP", "tags": ["Bad_Name"]}`,
		`{"name": 3}`,
		`[]`,
	} {
		var obj any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		obj = normalise(obj)
		want := validation.ValidateCustomResource(nil, obj, upstream)
		got := fieldErrors(ours.Validate(obj))
		require.Equal(t, errorLines(want), errorLines(got), doc)
		all = append(all, errorLines(got)...)
	}
	// Every branch of fieldError was taken, so the comparison covered it.
	joined := strings.Join(all, "\n")
	for _, kind := range []string{"Required value", "Unsupported value", "Too long", "Too many", "Invalid value", "must be of type"} {
		require.Contains(t, joined, kind)
	}
}

// errorLines is the errors' text in a fixed order: kube-openapi walks
// properties in map order, and schema.check sorts its findings by path.
func errorLines(errs field.ErrorList) []string {
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	sort.Strings(lines)
	return lines
}
