package schema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

const (
	managedBy = "self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']"
	exclusive = "!((has(self.onSuccess) || has(self.onFailure)) && has(self.deletionRules))"
)

// node is a schema node of type typ carrying rules, with properties props.
func node(typ string, rules apiextensionsv1.ValidationRules, props map[string]structuralschema.Structural) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: typ}, Properties: props,
		ValidationExtensions: structuralschema.ValidationExtensions{XValidations: rules}}
}

func rule(text, msg string) apiextensionsv1.ValidationRules {
	return apiextensionsv1.ValidationRules{{Rule: text, Message: msg}}
}

// A schema's rules are checked wherever they sit (properties, map values,
// list items): a rule not written out in Go, or a non-transition rule
// with a message expression, field path or reason, fails naming its path.
func TestCheckRules(t *testing.T) {
	unknown := rule("self.size() > 0", "")
	withExpr := apiextensionsv1.ValidationRules{{Rule: managedBy, MessageExpression: "'no'"}}
	transitionExpr := apiextensionsv1.ValidationRules{{Rule: "self == oldSelf", MessageExpression: "'immutable'"}}
	str := func(r apiextensionsv1.ValidationRules) structuralschema.Structural { return node("string", r, nil) }
	cases := []struct {
		name string
		s    structuralschema.Structural
		err  string // "" when every rule is evaluated
	}{
		{"known rules", node("object", rule(exclusive, ""), map[string]structuralschema.Structural{"m": str(rule(managedBy, ""))}), ""},
		{"unknown rule in a property", node("object", nil, map[string]structuralschema.Structural{"spec": node("object", nil, map[string]structuralschema.Structural{"x": str(unknown)})}),
			`RayJob.spec.x: CEL rule "self.size() > 0" is not among the rules nrl-k8s evaluates offline (fn/analyse/schema/rules.go); add it there with a tests/schema case`},
		{"unknown rule in a map value", structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
			AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &structuralschema.Structural{ValidationExtensions: structuralschema.ValidationExtensions{XValidations: unknown}}}},
			`RayJob[*]: CEL rule "self.size() > 0" is not among`},
		{"unknown rule in list items", structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &structuralschema.Structural{ValidationExtensions: structuralschema.ValidationExtensions{XValidations: unknown}}},
			`RayJob[*]: CEL rule "self.size() > 0" is not among`},
		{"messageExpression", str(withExpr), `RayJob: CEL rule "` + managedBy + `" uses messageExpression, fieldPath or reason`},
		{"a transition rule's messageExpression is never evaluated", str(transitionExpr), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkRules(&c.s, "RayJob")
			if c.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.err)
		})
	}
}

// Each rule breaks where the API server's CEL validator says (each rule's
// truth against CEL itself is tests/schema's upstream test): at the
// node's path, with the rule's message (else "failed rule: RULE"), the
// value omitted for objects and lists; transition rules never break on
// a create.
func TestEvalRules(t *testing.T) {
	strategy := node("object", rule(exclusive, "pick one"), nil)
	spec := node("object", nil, map[string]structuralschema.Structural{
		"managedBy":        node("string", rule(managedBy, ""), nil),
		"deletionStrategy": strategy,
		"immutable":        node("string", rule("self == oldSelf", "immutable"), nil),
		"list":             {Generic: structuralschema.Generic{Type: "array"}, Items: &strategy},
		"byName":           {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &strategy}},
	})
	both := map[string]any{"onSuccess": map[string]any{}, "deletionRules": []any{}}
	cases := []struct {
		name string
		obj  map[string]any
		want []string
	}{
		{"holds", map[string]any{"managedBy": "ray.io/kuberay-operator", "deletionStrategy": map[string]any{"deletionRules": []any{}}}, nil},
		{"a string breaks with its value", map[string]any{"managedBy": "me"},
			[]string{`spec.managedBy: Invalid value: "me": failed rule: ` + managedBy}},
		{"an object breaks with its message", map[string]any{"deletionStrategy": both},
			[]string{`spec.deletionStrategy: Invalid value: pick one`}},
		{"in a list", map[string]any{"list": []any{map[string]any{}, both}},
			[]string{`spec.list[1]: Invalid value: pick one`}},
		{"in a map", map[string]any{"byName": map[string]any{"a": both}},
			[]string{`spec.byName[a]: Invalid value: pick one`}},
		{"a transition rule", map[string]any{"immutable": "x"}, nil},
	}
	root := node("object", nil, map[string]structuralschema.Structural{"spec": spec})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, e := range evalRules(nil, map[string]any{"spec": c.obj}, &root) {
				got = append(got, e.Error())
			}
			assert.Equal(t, c.want, got)
		})
	}
}
