package check

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// AppliedDefault is a value the render took from fn/engine/load/profile/defaults.yaml
// (or derived) rather than from a key the profile sets, for a feature the
// render uses: check's summary lists every one, so no cluster's setting
// reaches a manifest unseen.
type AppliedDefault struct {
	Key, Value, Why string
}

// AppliedDefaults lists the defaults a render used. A key is listed when
// no layer of the profile sets it (profile.Loaded.Sets: a value equal to
// defaults.yaml's that the profile wrote is its own), its value is
// defaults.yaml's and the rendered objects use the feature it configures.
func AppliedDefaults(p *profile.Loaded, mode runparams.Mode, docs []rendered.Doc) []AppliedDefault {
	in := p.Infra
	kinds := map[string]bool{}
	roce, cd := false, false
	for _, d := range docs {
		kinds[d.Kind] = true
		if d.Kind == "ResourceClaimTemplate" && requestName(d.Data) == "roce" {
			roce = true
		}
		cd = cd || d.Kind == "ComputeDomain"
	}
	var out []AppliedDefault
	def := func(key string, have any, why string, also ...string) {
		for _, k := range append(also, key) {
			if p.Sets(k) {
				return
			}
		}
		if v, ok := profile.DefaultValue(key); ok && fmt.Sprint(v) == fmt.Sprint(have) {
			out = append(out, AppliedDefault{key, fmt.Sprint(have), why})
		}
	}
	if in.Namespace == profile.DefaultNamespace && !p.Sets("namespace") {
		out = append(out, AppliedDefault{"namespace", in.Namespace, "no namespace in the profile or the run"})
	}
	if roce {
		for _, rc := range in.Kuberay.ByRole() {
			d := in.EffectiveDRA(rc.Cluster).RoCE
			own := "kuberay." + rc.Role + ".dra.roce."
			def("dra.roce.deviceClassName", d.Class, "nrl-k8s's hard-coded class (an AWS GB300 cluster's); set yours", own+"deviceClassName")
			def("dra.roce.count", d.Count, "nrl-k8s's hard-coded NICs per worker pod", own+"count")
			break
		}
	}
	if cd {
		def("dra.computeDomain.numNodes", in.EffectiveDRA(nil).CDNodes, "the ComputeDomain follows the pods")
	}
	if kinds["RayJob"] && mode == runparams.RayJob {
		def("launch.rayjob.submissionMode", in.Launch.RayJob.SubmissionMode, "nrl-k8s's value")
		def("launch.rayjob.ttlSecondsAfterFinished", in.Launch.RayJob.TTLSecondsAfterFinished, "nrl-k8s's value")
	}
	if in.HFCache.Kind != "none" {
		def("hf_cache.mountPath", in.HFCache.MountPath, "")
	}
	if in.Checkpoints.Kind != "none" {
		def("checkpoints.mountPath", in.Checkpoints.MountPath, "")
	}
	if mode == runparams.Dev {
		if c := profile.DevWorkspaceClaim(in); c.Claim != "" && c.From != "dev.pvcName" {
			out = append(out, AppliedDefault{"dev.pvcName", c.Claim, "from " + c.From})
		}
		if m := profile.DevMountPath(in); m.From != "dev.mountPath" {
			out = append(out, AppliedDefault{"dev.mountPath", m.Path, m.From})
		}
	}
	return out
}

// requestName is a ResourceClaimTemplate's first device request's name.
func requestName(obj map[string]any) string {
	spec, _ := obj["spec"].(map[string]any)
	inner, _ := spec["spec"].(map[string]any)
	devices, _ := inner["devices"].(map[string]any)
	reqs, _ := devices["requests"].([]any)
	if len(reqs) == 0 {
		return ""
	}
	r, _ := reqs[0].(map[string]any)
	n, _ := r["name"].(string)
	return n
}
