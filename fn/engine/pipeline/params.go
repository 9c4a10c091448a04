package pipeline

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// ParamNames says how each entry point spells the run parameters, so that a
// bad value is reported where the user wrote it (`--run-id` on the command
// line, `spec.runId` in a NemoRLRun), not only on the object it ends up in.
type ParamNames struct {
	Namespace, RunID, Name, User, State string
	Labels, Annotations                 string
}

var (
	// CLIParams: nrl-k8s render, check, values.
	CLIParams = ParamNames{Namespace: "--namespace", RunID: "--run-id", Name: "--name", User: "--user", State: "--state", Labels: "--label", Annotations: "--annotation"}
	// RunSpecParams: a NemoRLRun (KRM function, render-all).
	RunSpecParams = ParamNames{Namespace: "spec.namespace", RunID: "spec.runId", Name: "spec.name", User: "spec.user", State: "spec.state",
		Labels: "spec.labels", Annotations: "spec.annotations"}
)

// validateParams checks the run parameters against the Kubernetes rules of
// the places they land in: the namespace is a DNS-1123 label; the run id is
// a label value, a suffix of object names and Ray's submission id, so a
// DNS-1123 label; a name becomes a RayJob name, a DNS-1035 label (its length
// against KubeRay's limit is checked on the object, where suffixes are
// known).
func validateParams(req Request, ds *diag.List) {
	names := req.ParamNames
	if names == (ParamNames{}) {
		names = CLIParams
	}
	if req.Namespace != "" {
		for _, e := range validation.IsDNS1123Label(req.Namespace) {
			ds.Errorf("", names.Namespace, "found %q; expected a namespace name (DNS-1123 label): %s", req.Namespace, e)
		}
	}
	// The user names objects (<user>-secrets, the dev pod) and labels every
	// one (nrl-k8s/owner): a user that is not a DNS-1123 label is one
	// error about the user, not one per object it would break.
	if req.User != "" {
		for _, e := range validation.IsDNS1123Label(req.User) {
			ds.Errorf("", names.User, "found %q; expected a user name usable in object names and as a label value (DNS-1123 label: lower case letters, digits and '-'; `_` and `.` become '-'): %s", req.User, e)
		}
	}
	if req.RunID != "" {
		for _, e := range validation.IsDNS1123Label(req.RunID) {
			ds.Errorf("", names.RunID, "found %q; expected a run id usable as a label value and in object names (DNS-1123 label): %s", req.RunID, e)
		}
	}
	if req.Name != "" {
		for _, e := range validation.IsDNS1035Label(req.Name) {
			ds.Errorf("", names.Name, "found %q; expected a RayJob name (DNS-1035 label): %s", req.Name, e)
		}
	}
	if !req.State.Valid() {
		ds.Errorf("", names.State, "found %q; expected run or stopped (docs/gitops.md, \"A run's life in Git\")", req.State)
	}
	// The state annotation is what the review, the chart's upgrade guard
	// and Argo CD's health read a run's declared state from: on a running
	// run it would pass the run off as stopped.
	for _, kv := range []struct {
		field string
		pairs map[string]string
	}{{names.Labels, req.Labels}, {names.Annotations, req.Annotations}} {
		if _, ok := kv.pairs[vocab.StateAnnotation]; ok {
			ds.Errorf("", kv.field, "sets %s, which says a run's declared state; expected the state parameter (%s stopped), which also renders the run stopped", vocab.StateAnnotation, names.State)
		}
	}
	if req.NoDeployments && req.OnlyDeployments {
		ds.Errorf("", "--only-deployments", "renders only the profile's deployments, and --no-deployments leaves them out; expected one of them (the shared services: --only-deployments; a run that reaches them: --no-deployments)")
	}
}
