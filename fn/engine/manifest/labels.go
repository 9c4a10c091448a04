package manifest

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Label and annotation precedence (docs/nrl-k8s.md §4.1, the pod labels, plus the run
// identity, docs/run-identity.md): every rule about which label wins lives here.

// merged layers maps, later ones winning; nil when the result is empty.
func merged(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// defaults may be overridden by anything (a user may relabel managed-by).
var defaults = map[string]string{vocab.ManagedByLabel: vocab.ManagedByValue, vocab.PartOfLabel: vocab.PartOfValue}

// identity is who an object belongs to: the run (or the shared clusters or
// service) it is part of, its owner and run id, and the labels and
// annotations the run's own metadata carries (NemoRLRun metadata, --label,
// the Helm chart's values).
type identity struct {
	instance, owner, runID string
	labels, annotations    map[string]string
}

// idLabels win over every other layer: a selector on the instance, owner or
// run id must find every object and pod of the run.
func (id identity) idLabels() map[string]string {
	out := map[string]string{}
	if id.instance != "" {
		out[vocab.InstanceLabel] = id.instance
	}
	if id.owner != "" {
		out[vocab.OwnerLabel] = id.owner
	}
	if id.runID != "" {
		out[vocab.RunIDLabel] = id.runID
	}
	return out
}

// objectLabels: defaults, profile labels, the object's own (cluster or
// deployment) labels, the run's labels, extra, then the identity.
func (id identity) objectLabels(profile, own, extra map[string]string) map[string]string {
	return merged(defaults, profile, own, id.labels, extra, id.idLabels())
}

// podLabels: as objectLabels, with the labels already on the pod template
// above the profile's and the object's (but below the run's).
func (id identity) podLabels(profile, own, existing map[string]string) map[string]string {
	return merged(defaults, profile, own, existing, id.labels, id.idLabels())
}

// objectAnnotations: profile annotations, the object's own, then the run's;
// nil if empty.
func (id identity) objectAnnotations(profile, own map[string]string) map[string]string {
	return merged(profile, own, id.annotations)
}

// podAnnotations: profile and object annotations never propagate to pods;
// the run's do, over the template's own.
func (id identity) podAnnotations(existing map[string]string) map[string]string {
	return merged(existing, id.annotations)
}

// bareLabels: DRA objects and Services carry the defaults and the run's labels only (no
// profile labels, as in nrl-k8s).
func (id identity) bareLabels() map[string]string {
	return merged(defaults, id.labels, id.idLabels())
}

// selectedWins puts back the values a Deployment's selector matches on: a
// template the selector does not match is rejected by the API server, so
// the selector's labels win over every layer above.
func selectedWins(labels, selector map[string]string) map[string]string {
	if len(selector) == 0 {
		return labels
	}
	return merged(labels, selector)
}

// checkRunMetadata refuses run labels and annotations the API server would
// refuse, naming the key: they arrive from flags, a NemoRLRun's metadata or
// chart values, and go onto every object. (The run name is checked with the
// other run parameters, pipeline.validateParams.)
func checkRunMetadata(p runparams.Params) []fieldError {
	var errs []fieldError
	add := func(field, what, found string, msgs []string) {
		if len(msgs) > 0 {
			errs = append(errs, fieldError{field: field, msg: fmt.Sprintf("%s %q is invalid: %s", what, found, strings.Join(msgs, "; "))})
		}
	}
	for _, k := range tree.SortedKeys(p.Labels) {
		add("labels."+k, "label key", k, validation.IsQualifiedName(k))
		add("labels."+k, "label value", p.Labels[k], validation.IsValidLabelValue(p.Labels[k]))
	}
	for _, k := range tree.SortedKeys(p.Annotations) {
		add("annotations."+k, "annotation key", k, validation.IsQualifiedName(strings.ToLower(k)))
	}
	return errs
}
