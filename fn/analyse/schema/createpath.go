// The three steps of a custom resource create that nrl-k8s restates rather
// than imports: the packages that hold them upstream also link CEL, the
// apiserver's feature gates and the prometheus metrics registries into every
// process (see the package comment). Each matches one upstream behaviour of
// k8s.io/apiextensions-apiserver v0.36.2, and tests/schema holds it equal by
// running the upstream packages next to it:
//   - fillDefaults: schema/defaulting's Default;
//   - validationSchema: the schema validation.NewSchemaValidator builds;
//   - fieldErrors: how validation.ValidateCustomResource words its errors.

package schema

import (
	"encoding/json"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// fillDefaults writes the schema's defaults into v in place, the way the API
// server does before it validates: a field takes its default when it is
// absent, or when it is null and the schema does not allow null. Defaults are
// filled top down, so a default that is itself an object gets the defaults
// of its own fields too.
func fillDefaults(v any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		fillObjectDefaults(v, s)
	case []any:
		for i := range v {
			v[i] = defaultIfForbiddenNull(v[i], s.Items)
			fillDefaults(v[i], s.Items)
		}
	}
}

func fillObjectDefaults(obj map[string]any, s *structuralschema.Structural) {
	for name, prop := range s.Properties {
		if prop.Default.Object == nil {
			continue
		}
		if cur, set := obj[name]; !set || (cur == nil && !prop.Nullable) {
			obj[name] = runtime.DeepCopyJSONValue(prop.Default.Object)
		}
	}
	// Descend after the pass above, so defaults just written are filled too.
	for name, val := range obj {
		if prop, known := s.Properties[name]; known {
			fillDefaults(val, &prop)
			continue
		}
		if s.AdditionalProperties == nil {
			continue
		}
		// A map's values have no name to be absent under; only a
		// forbidden null can take the value schema's default.
		each := s.AdditionalProperties.Structural
		obj[name] = defaultIfForbiddenNull(val, each)
		fillDefaults(obj[name], each)
	}
}

// defaultIfForbiddenNull gives an explicit null the schema does not allow
// the schema's default (null again when it has none); any other value stays.
func defaultIfForbiddenNull(v any, s *structuralschema.Structural) any {
	if v != nil || s == nil || s.Nullable {
		return v
	}
	return runtime.DeepCopyJSONValue(s.Default.Object)
}

// validationSchema is the kube-openapi schema the API server validates a
// custom resource against. Two things differ from the structural schema's
// plain OpenAPI form: an int-or-string field is typed integer-or-string, and
// a format the API server does not check is dropped, so that a value it
// would accept is not refused here for a format kube-openapi happens to know.
func validationSchema(s *structuralschema.Structural) *spec.Schema {
	root := s.ToKubeOpenAPI()
	visitSchemas(root, func(n *spec.Schema) {
		if intOrString, _ := n.Extensions.GetBool("x-kubernetes-int-or-string"); intOrString {
			n.Type = spec.StringOrArray{"integer", "string"}
		}
		if n.Format != "" && !formatChecked(n.Type, n.Format) {
			n.Format = ""
		}
	})
	return root
}

// formatChecked reports whether the API server validates format on a
// schema of these types: only the integer and number widths, and, on a
// string or untyped schema, the formats of checkedStringFormat. A format
// on any other type, or on several types, is ignored.
func formatChecked(types spec.StringOrArray, format string) bool {
	if len(types) != 1 {
		return checkedStringFormat(format)
	}
	switch types[0] {
	case "", "string":
		return checkedStringFormat(format)
	case "integer":
		return format == "int32" || format == "int64"
	case "number":
		return format == "float" || format == "double"
	}
	return false
}

// checkedStringFormat reports whether a v1.36 API server, at its default
// compatibility version, validates this string format. go-openapi looks
// formats up with dashes removed, so "date-time" and "datetime" are the same
// format. A switch, not a package-level set: nothing runs at process start.
func checkedStringFormat(format string) bool {
	switch strings.ReplaceAll(format, "-", "") {
	case "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac",
		"uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn",
		"hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
		"k8sshortname", "k8slongname": // the last two since v1.34
		return true
	}
	return false
}

// visitSchemas calls visit on n and on every schema nested below it. Map
// entries are values, not pointers, so each is visited as a copy and stored
// back.
func visitSchemas(n *spec.Schema, visit func(*spec.Schema)) {
	if n == nil {
		return
	}
	visit(n)
	visitSchemaMap(n.Properties, visit)
	visitSchemaMap(n.PatternProperties, visit)
	visitSchemaMap(n.Definitions, visit)
	if n.Items != nil {
		visitSchemas(n.Items.Schema, visit)
		visitSchemaList(n.Items.Schemas, visit)
	}
	if n.AdditionalProperties != nil {
		visitSchemas(n.AdditionalProperties.Schema, visit)
	}
	if n.AdditionalItems != nil {
		visitSchemas(n.AdditionalItems.Schema, visit)
	}
	visitSchemaList(n.AllOf, visit)
	visitSchemaList(n.AnyOf, visit)
	visitSchemaList(n.OneOf, visit)
	visitSchemas(n.Not, visit)
}

func visitSchemaMap(m map[string]spec.Schema, visit func(*spec.Schema)) {
	for name, n := range m {
		visitSchemas(&n, visit)
		m[name] = n
	}
}

func visitSchemaList(list []spec.Schema, visit func(*spec.Schema)) {
	for i := range list {
		visitSchemas(&list[i], visit)
	}
}

// fieldErrors words kube-openapi's findings as the API server's field
// errors, so `check --strict` reads like the refusal a create would get.
// Paths are relative to the object (no root path), as for a create.
func fieldErrors(result *validate.Result) field.ErrorList {
	if result.IsValid() {
		return nil
	}
	errs := make(field.ErrorList, 0, len(result.Errors))
	for _, err := range result.Errors {
		errs = append(errs, fieldError(err))
	}
	return errs
}

func fieldError(err error) *field.Error {
	// kube-openapi returns the concrete type, never a wrapped chain.
	v, ok := err.(*openapierrors.Validation) //nolint:errorlint // see above
	if !ok || v == nil {
		return field.Invalid(nil, "", err.Error())
	}
	var at *field.Path // "." or no name: the object itself
	if v.Name != "" && v.Name != "." {
		at = field.NewPath(strings.TrimPrefix(v.Name, "."))
	}
	switch v.Code() {
	case openapierrors.RequiredFailCode:
		return field.Required(at, "")
	case openapierrors.EnumFailCode:
		return field.NotSupported(at, v.Value, enumWords(v.Values))
	case openapierrors.TooLongFailCode:
		return field.TooLong(at, "", intOrUnknown(v.Valid))
	case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
		return field.TooMany(at, intOrUnknown(v.Value), intOrUnknown(v.Valid))
	case openapierrors.InvalidTypeCode:
		return field.TypeInvalid(at, valueOrEmpty(v.Value), v.Error())
	}
	return field.Invalid(at, valueOrEmpty(v.Value), v.Error())
}

// enumWords lists an enum's allowed values as the API server quotes them:
// strings as they are, anything else as JSON.
func enumWords(values []any) []string {
	words := make([]string, 0, len(values))
	for _, val := range values {
		if s, ok := val.(string); ok {
			words = append(words, s)
			continue
		}
		j, _ := json.Marshal(val)
		words = append(words, string(j))
	}
	return words
}

// intOrUnknown is a limit or count kube-openapi reports, or -1 when it
// reports none: field's constructors read -1 as unknown and leave the
// figure out of the message.
func intOrUnknown(v any) int {
	if i, ok := v.(int64); ok {
		return int(i)
	}
	return -1
}

// valueOrEmpty keeps a nil value from printing as <nil> in the message.
func valueOrEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}
