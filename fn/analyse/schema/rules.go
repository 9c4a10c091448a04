package schema

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The embedded CRDs' x-kubernetes-validations (CEL) rules, as Go. The API
// server compiles them with CEL; linking CEL (cel-go, protobuf descriptors,
// the apiserver's CEL environment and metrics) would cost every nrl-k8s
// process its package initialisation (see the package comment), so each
// rule the CRDs carry is written out here once, keyed by its exact text.
// A CRD update bringing a rule not listed fails `check --strict` (and
// tests/schema) naming the rule, rather than skipping it; tests/schema
// evaluates every listed rule with the API server's own CEL validator on
// objects that pass and fail it.
type ruleEval struct {
	// transition rules compare with oldSelf, the stored object: the API
	// server evaluates them on update only, never on the create that a
	// rendered object is.
	transition bool
	holds      func(self any) bool
}

var celRules = map[string]ruleEval{
	// The managedBy field of RayJob and RayCluster, and ComputeDomain's spec, are immutable.
	"self == oldSelf": {transition: true},
	// RayJob/RayCluster spec.managedBy.
	"self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']": {holds: func(self any) bool {
		s, ok := self.(string)
		return ok && (s == "ray.io/kuberay-operator" || s == "kueue.x-k8s.io/multikueue")
	}},
	// RayJob spec.deletionStrategy: legacy policies and deletionRules exclude each other.
	"!((has(self.onSuccess) || has(self.onFailure)) && has(self.deletionRules))": {holds: func(self any) bool {
		return !((has(self, "onSuccess") || has(self, "onFailure")) && has(self, "deletionRules")) //nolint:staticcheck // written as the CEL rule reads, to compare them by eye
	}},
	// RayJob spec.deletionStrategy: both legacy policies, or deletionRules.
	"((has(self.onSuccess) && has(self.onFailure)) || has(self.deletionRules))": {holds: func(self any) bool {
		return (has(self, "onSuccess") && has(self, "onFailure")) || has(self, "deletionRules")
	}},
}

// has is CEL's has(self.field) on an object.
func has(self any, field string) bool {
	m, ok := self.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[field]
	return ok
}

// checkRules fails for a rule of the schema that celRules cannot evaluate
// as the API server would.
func checkRules(s *structuralschema.Structural, path string) error {
	if s == nil {
		return nil
	}
	for _, r := range s.XValidations {
		e, ok := celRules[r.Rule]
		switch {
		case !ok:
			return fmt.Errorf("%s: CEL rule %q is not among the rules nrl-k8s evaluates offline (fn/analyse/schema/rules.go); add it there with a tests/schema case", path, r.Rule)
		case !e.transition && (r.MessageExpression != "" || r.FieldPath != "" || r.Reason != nil):
			return fmt.Errorf("%s: CEL rule %q uses messageExpression, fieldPath or reason, which fn/analyse/schema/rules.go does not evaluate", path, r.Rule)
		}
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		if err := checkRules(&p, path+"."+k); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil {
		if err := checkRules(s.AdditionalProperties.Structural, path+"[*]"); err != nil {
			return err
		}
	}
	return checkRules(s.Items, path+"[*]")
}

// evalRules evaluates the rules on every node of obj their schema node
// applies to, with the field errors the API server's CEL validator gives.
func evalRules(fldPath *field.Path, obj any, s *structuralschema.Structural) field.ErrorList {
	if s == nil || obj == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range s.XValidations {
		e := celRules[r.Rule]
		if e.transition || e.holds(obj) {
			continue
		}
		detail := strings.TrimSpace(r.Message)
		if detail == "" {
			detail = "failed rule: " + strings.TrimSpace(r.Rule)
		}
		value := obj
		if s.Type == "object" || s.Type == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, field.Invalid(fldPath, value, detail))
	}
	switch obj := obj.(type) {
	case map[string]any:
		for k, v := range obj {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, evalRules(fldPath.Child(k), v, &p)...)
			} else if s.AdditionalProperties != nil {
				errs = append(errs, evalRules(fldPath.Key(k), v, s.AdditionalProperties.Structural)...)
			}
		}
	case []any:
		for i, v := range obj {
			errs = append(errs, evalRules(fldPath.Index(i), v, s.Items)...)
		}
	}
	return errs
}
