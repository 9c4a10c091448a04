/*
Copyright 2017, 2019 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// This file holds the three pieces of k8s.io/apiextensions-apiserver v0.36.2
// that nrl-k8s needs but cannot import without linking CEL, the apiserver's
// feature gates and the prometheus metrics registries into every process
// (the packages they live in import those for their other files; see the
// package comment). They are copied with their behaviour unchanged:
//   - applyDefaults: pkg/apiserver/schema/defaulting/algorithm.go (Default);
//   - openAPISchema: what pkg/apiserver/validation's NewSchemaValidator
//     builds (ConvertJSONSchemaPropsWithPostProcess with
//     StripUnsupportedFormatsPostProcessorForVersion), here from the
//     structural schema's own faithful ToKubeOpenAPI;
//   - openAPIResultToFieldErrors: pkg/apiserver/validation/validation.go
//     (kubeOpenAPIResultToFieldErrors), so messages read as the API server's.
// tests/schema compares the result with the upstream packages themselves.

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

// isNonNullableNull returns true if the item is nil AND it's nullable.
func isNonNullableNull(x any, s *structuralschema.Structural) bool {
	return x == nil && s != nil && !s.Nullable
}

// applyDefaults sets the schema's default values where x lacks them
// (upstream defaulting.Default).
func applyDefaults(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if prop.Default.Object == nil {
				continue
			}
			if _, found := x[k]; !found || isNonNullableNull(x[k], &prop) {
				x[k] = runtime.DeepCopyJSONValue(prop.Default.Object)
			}
		}
		for k := range x {
			if prop, found := s.Properties[k]; found {
				applyDefaults(x[k], &prop)
			} else if s.AdditionalProperties != nil {
				if isNonNullableNull(x[k], s.AdditionalProperties.Structural) {
					x[k] = runtime.DeepCopyJSONValue(s.AdditionalProperties.Structural.Default.Object)
				}
				applyDefaults(x[k], s.AdditionalProperties.Structural)
			}
		}
	case []any:
		for i := range x {
			if isNonNullableNull(x[i], s.Items) {
				x[i] = runtime.DeepCopyJSONValue(s.Items.Default.Object)
			}
			applyDefaults(x[i], s.Items)
		}
	}
}

// supportedStringFormats are the string formats a v1.36 API server checks
// in a CRD (upstream supportedVersionedFormats at its default compatibility
// version, normalised without dashes as go-openapi names them); it ignores
// every other format.
var supportedStringFormats = map[string]bool{
	"bsonobjectid": true, "uri": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true,
	"cidr": true, "mac": true, "uuid": true, "uuid3": true, "uuid4": true, "uuid5": true,
	"isbn": true, "isbn10": true, "isbn13": true, "creditcard": true, "ssn": true, "hexcolor": true,
	"rgbcolor": true, "byte": true, "password": true, "date": true, "duration": true, "datetime": true,
	"k8sshortname": true, "k8slongname": true,
}

// openAPISchema is the kube-openapi schema the API server validates a
// custom resource with: int-or-string typed as integer or string, and the
// formats it does not support stripped.
func openAPISchema(s *structuralschema.Structural) *spec.Schema {
	out := s.ToKubeOpenAPI()
	walkOpenAPI(out, func(s *spec.Schema) {
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
			s.Type = spec.StringOrArray{"integer", "string"}
		}
		if s.Format == "" {
			return
		}
		schemaType := ""
		if len(s.Type) == 1 {
			schemaType = s.Type[0]
		}
		switch schemaType {
		case "", "string":
			if !supportedStringFormats[strings.ReplaceAll(s.Format, "-", "")] {
				s.Format = ""
			}
		case "integer":
			if s.Format != "int32" && s.Format != "int64" {
				s.Format = ""
			}
		case "number":
			if s.Format != "float" && s.Format != "double" {
				s.Format = ""
			}
		default:
			s.Format = ""
		}
	})
	return out
}

// walkOpenAPI calls f on s and every schema nested in it.
func walkOpenAPI(s *spec.Schema, f func(*spec.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for k, p := range s.Properties {
		walkOpenAPI(&p, f)
		s.Properties[k] = p
	}
	if s.Items != nil {
		walkOpenAPI(s.Items.Schema, f)
		for i := range s.Items.Schemas {
			walkOpenAPI(&s.Items.Schemas[i], f)
		}
	}
	if s.AdditionalProperties != nil {
		walkOpenAPI(s.AdditionalProperties.Schema, f)
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walkOpenAPI(&list[i], f)
		}
	}
	walkOpenAPI(s.Not, f)
}

// openAPIResultToFieldErrors turns kube-openapi's result into the field
// errors the API server reports (upstream kubeOpenAPIResultToFieldErrors).
func openAPIResultToFieldErrors(fldPath *field.Path, result *validate.Result) field.ErrorList {
	if result.IsValid() {
		return nil
	}
	var allErrs field.ErrorList
	for _, err := range result.Errors {
		var verr *openapierrors.Validation
		if e, ok := err.(*openapierrors.Validation); ok { //nolint:errorlint // the upstream switch is on the concrete type, not a wrapped chain
			verr = e
		}
		if verr == nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "", err.Error()))
			continue
		}
		errPath := fldPath
		if len(verr.Name) > 0 && verr.Name != "." {
			errPath = errPath.Child(strings.TrimPrefix(verr.Name, "."))
		}
		switch verr.Code() {
		case openapierrors.RequiredFailCode:
			allErrs = append(allErrs, field.Required(errPath, ""))
		case openapierrors.EnumFailCode:
			values := []string{}
			for _, allowedValue := range verr.Values {
				if s, ok := allowedValue.(string); ok {
					values = append(values, s)
				} else {
					allowedJSON, _ := json.Marshal(allowedValue)
					values = append(values, string(allowedJSON))
				}
			}
			allErrs = append(allErrs, field.NotSupported(errPath, verr.Value, values))
		case openapierrors.TooLongFailCode:
			limit := int64(-1)
			if i, ok := verr.Valid.(int64); ok {
				limit = i
			}
			allErrs = append(allErrs, field.TooLong(errPath, "" /*unused*/, int(limit)))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			actual := int64(-1)
			if i, ok := verr.Value.(int64); ok {
				actual = i
			}
			limit := int64(-1)
			if i, ok := verr.Valid.(int64); ok {
				limit = i
			}
			allErrs = append(allErrs, field.TooMany(errPath, int(actual), int(limit)))
		case openapierrors.InvalidTypeCode:
			value := any("")
			if verr.Value != nil {
				value = verr.Value
			}
			allErrs = append(allErrs, field.TypeInvalid(errPath, value, verr.Error()))
		default:
			value := any("")
			if verr.Value != nil {
				value = verr.Value
			}
			allErrs = append(allErrs, field.Invalid(errPath, value, verr.Error()))
		}
	}
	return allErrs
}
