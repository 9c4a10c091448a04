package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// TestValidateParams: each run parameter is held to the rule of the place
// it lands in and refused where the entry point's user wrote it (the CLI's
// flags by default); the state annotation is the state parameter's alone
// (a running run carrying it reads as stopped to the review, the chart's
// upgrade guard and Argo CD's health).
func TestValidateParams(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names ParamNames
		req   func(*Request)
		want  []string // "FIELD: MESSAGE" prefixes, in order
	}{
		{"clean", ParamNames{}, func(r *Request) {
			r.Namespace, r.User, r.RunID, r.Name, r.State = "ns", "alice", "r1", "sweep-a", runparams.Stopped
			r.Annotations = map[string]string{"example.com/note": "x"}
		}, nil},
		{"namespace", ParamNames{}, func(r *Request) { r.Namespace = "Team_A" }, []string{`--namespace: found "Team_A"; expected a namespace name (DNS-1123 label)`}},
		{"user", RunSpecParams, func(r *Request) { r.User = "a.b" }, []string{`spec.user: found "a.b"; expected a user name usable in object names`}},
		{"run id", ParamNames{}, func(r *Request) { r.RunID = "has spaces" }, []string{`--run-id: found "has spaces"; expected a run id`}},
		{"name", RunSpecParams, func(r *Request) { r.Name = "1st" }, []string{`spec.name: found "1st"; expected a RayJob name (DNS-1035 label)`}},
		{"state", CLIParams, func(r *Request) { r.State = "paused" }, []string{`--state: found "paused"; expected run or stopped`}},
		{"--annotation", CLIParams, func(r *Request) { r.Annotations = map[string]string{vocab.StateAnnotation: "stopped"} },
			[]string{"--annotation: sets " + vocab.StateAnnotation}},
		{"spec.labels", RunSpecParams, func(r *Request) { r.Labels = map[string]string{vocab.StateAnnotation: "run"} },
			[]string{"spec.labels: sets " + vocab.StateAnnotation}},
		{"stopped too", RunSpecParams, func(r *Request) {
			r.State = runparams.Stopped
			r.Annotations = map[string]string{vocab.StateAnnotation: "stopped"}
		}, []string{"spec.annotations: sets " + vocab.StateAnnotation + ", which says a run's declared state; expected the state parameter (spec.state stopped)"}},
		{"no and only deployments", ParamNames{}, func(r *Request) { r.NoDeployments, r.OnlyDeployments = true, true },
			[]string{"--only-deployments: renders only the profile's deployments, and --no-deployments leaves them out"}},
		{"each refusal", ParamNames{}, func(r *Request) { r.User, r.RunID = "A", "-" }, []string{"--user: ", "--run-id: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{ParamNames: tc.names}
			tc.req(&req)
			var ds diag.List
			validateParams(req, &ds)
			assert.Len(t, ds, len(tc.want), "%v", ds)
			for i, w := range tc.want {
				if i < len(ds) {
					assert.Equal(t, diag.Error, ds[i].Severity)
					assert.Contains(t, ds[i].Field+": "+ds[i].Message, w)
				}
			}
		})
	}
}
