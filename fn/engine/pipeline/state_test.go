package pipeline_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// TestStateAnnotationIsTheStates: a label or annotation of the run's own
// under the state key is refused where it was written (a running run
// carrying it reads as stopped to the review, the chart's upgrade guard and
// Argo CD's health); the state parameter is the one way to set it.
func TestStateAnnotationIsTheStates(t *testing.T) {
	e := fixtures.ShippedProfile(t, "generic-single-node-8gpu")
	for _, tc := range []struct {
		name  string
		names pipeline.ParamNames
		run   func(*runparams.Run)
		want  string
	}{
		{"--annotation", pipeline.CLIParams, func(r *runparams.Run) { r.Annotations = map[string]string{vocab.StateAnnotation: "stopped"} }, "--annotation: sets " + vocab.StateAnnotation},
		{"spec.labels", pipeline.RunSpecParams, func(r *runparams.Run) { r.Labels = map[string]string{vocab.StateAnnotation: "run"} }, "spec.labels: sets " + vocab.StateAnnotation},
		{"stopped too", pipeline.RunSpecParams, func(r *runparams.Run) {
			r.State = runparams.Stopped
			r.Annotations = map[string]string{vocab.StateAnnotation: "stopped"}
		}, "expected the state parameter (spec.state stopped)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := fixtures.As(runparams.RayJob)
			tc.run(&run)
			req := fixtures.Request(e, run)
			req.ParamNames = tc.names
			res := pipeline.Render(recipe.NewLoader(source.Disk{}), req)
			require.True(t, res.Diags.HasErrors())
			assert.Contains(t, fmt.Sprint(res.Diags.Sorted()), tc.want)
		})
	}
	run := fixtures.As(runparams.RayJob)
	run.Annotations = map[string]string{"example.com/note": "x"}
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), fixtures.Request(e, run))
	assert.False(t, res.Diags.HasErrors(), "%v", res.Diags)
}
