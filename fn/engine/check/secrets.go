package check

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Secrets scans what is about to be emitted, whatever layer it came from
// (profile, recipe, overrides, run labels): a manifest that would carry a
// credential is refused at render time by every entry point. Messages name
// the object and field, never the value.
func Secrets(file string, docs []rendered.Doc) diag.List {
	var ds diag.List
	for _, d := range docs {
		for _, f := range secrets.Scan(d.Data) {
			ds.Errorf(file, fmt.Sprintf("output %s/%s.%s", d.Kind, d.Name, f.Path), "%s", f.What)
		}
	}
	return ds
}

// hostEnv: in raycluster mode launch.env is exported in the training job's
// entrypoint, so a value read from the environment of whoever renders
// (${oc.env:...}) is baked into the manifest. Under a credential name that
// is a leaked secret; under any other name it is a render that depends on
// the machine.
func hostEnv(ds *diag.List, f string, prof *profile.Loaded, mode runparams.Mode) {
	if mode != runparams.RayCluster {
		return
	}
	for _, k := range prof.HostEnv {
		field := "launch.env." + k
		if secrets.Name(k) {
			ds.Errorf(f, field, "is taken from ${oc.env:...} and raycluster mode writes it into the manifest (an export in the training job's entrypoint); expected the credential to reach the pods from a Secret (secretKeyRef in the cluster spec)")
			continue
		}
		ds.Warnf(f, field, "is taken from ${oc.env:...} and raycluster mode writes its value into the manifest, so the render depends on the environment of whoever runs it")
	}
}
