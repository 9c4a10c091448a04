// Package krmframework is the KRM function as kyaml's
// framework.ResourceListProcessor (Process, Processor), for
// framework.Execute, command.Build and the tests that hold krm.Execute to
// them. It lives beside fn/frontend/krm, not in it, so that the function's
// binaries do not link kyaml's framework package and, with it, kube-openapi's
// validator, whose initialisation every start would pay.
package krmframework

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// Processor is the function as a kyaml ResourceListProcessor.
type Processor struct{}

// Process implements framework.ResourceListProcessor.
func (Processor) Process(rl *framework.ResourceList) error { return Process(rl) }

// Process is krm.Process on a ResourceList: afterwards rl.Items holds the
// items that are not ours, unchanged and in input order, then each run's
// objects in emit order; rl.Results gains one result per finding. The
// error is non-nil exactly when a result is an error.
func Process(rl *framework.ResourceList) error {
	if rl == nil {
		return errors.New("nil ResourceList")
	}
	items, results := krm.Process(rl.Items, rl.FunctionConfig)
	rl.Items = items
	rl.Results = append(rl.Results, Results(results)...)
	if rl.Results.ExitCode() != 0 {
		return rl.Results
	}
	return nil
}

// Results converts the function's results to kyaml's, field by field.
func Results(rs krm.Results) framework.Results {
	out := make(framework.Results, 0, len(rs))
	for _, r := range rs {
		fr := &framework.Result{Message: r.Message, Severity: framework.Severity(r.Severity),
			ResourceRef: r.ResourceRef, Tags: r.Tags}
		if r.Field != nil {
			fr.Field = &framework.Field{Path: r.Field.Path, CurrentValue: r.Field.CurrentValue, ProposedValue: r.Field.ProposedValue}
		}
		if r.File != nil {
			fr.File = &framework.File{Path: r.File.Path, Index: r.File.Index}
		}
		out = append(out, fr)
	}
	return out
}
