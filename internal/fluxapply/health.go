package fluxapply

import (
	"encoding/json"
	"fmt"

	"github.com/fluxcd/pkg/apis/kustomize"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	"sigs.k8s.io/yaml"
)

// HealthChecks are a Kustomization's healthCheckExprs by apiVersion/kind
// ("ray.io/v1/RayJob"), compiled as
// kustomize-controller compiles them (fluxcd/pkg/runtime/cel): decoded
// strictly into Flux's own type, so a misspelt key is an error, and refused
// when two expressions name one kind, as the controller refuses them.
func HealthChecks(kustomization []byte) (map[string]*fluxcel.StatusEvaluator, error) {
	var ks struct {
		Spec struct {
			HealthCheckExprs json.RawMessage `json:"healthCheckExprs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(kustomization, &ks); err != nil {
		return nil, err
	}
	var exprs []kustomize.CustomHealthCheck
	if err := yaml.UnmarshalStrict(ks.Spec.HealthCheckExprs, &exprs); err != nil {
		return nil, fmt.Errorf("spec.healthCheckExprs: %w", err)
	}
	if _, err := fluxcel.NewStatusReader(exprs); err != nil {
		return nil, err
	}
	out := map[string]*fluxcel.StatusEvaluator{}
	for _, hc := range exprs {
		ev, err := fluxcel.NewStatusEvaluator(&hc.HealthCheckExpressions)
		if err != nil {
			return nil, fmt.Errorf("healthCheckExprs for %s %s: %w", hc.APIVersion, hc.Kind, err)
		}
		out[hc.APIVersion+"/"+hc.Kind] = ev
	}
	return out, nil
}
