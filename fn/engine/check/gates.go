package check

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// The pipeline asks check at three points, one gate each: Inputs (the
// resolved run, before build), Objects (the typed objects build made) and
// Documents (the emitted documents, which are what is written).

// Objects judges the typed objects a build made: placement of the pods,
// how they are scheduled and admitted, and the code source they mount.
func Objects(file string, in *profile.Infra, objs []any) diag.List {
	ds := Placement(file, objs)
	ds = append(ds, Tolerations(file, objs)...)
	// Each scheduler's own checks of the objects (fn/scheduler/...: KAI's
	// gangs and topology, Kueue's webhooks).
	ds = append(ds, registry.CheckObjects(file, objs)...)
	return append(ds, CodeSource(file, in, objs)...)
}

// Documents judges the emitted documents: each read back strictly into its
// type with KubeRay's admission rules, no credential in them, the metadata
// of the pods KubeRay creates from them, then (only for documents that
// would be written) the Pod Security level of the pods
// KubeRay creates from them against the profile's declared one.
func Documents(file string, in *profile.Infra, docs []rendered.Doc) diag.List {
	ds := Output(file, docs)
	ds = append(ds, Secrets(file, docs)...)
	if ds.HasErrors() {
		return ds
	}
	if ds = append(ds, PodMetadata(file, docs)...); ds.HasErrors() {
		return ds
	}
	declared := ""
	if in.PodSecurity != nil {
		declared = *in.PodSecurity
	}
	return append(ds, PodSecurity(file, declared, docs)...)
}
