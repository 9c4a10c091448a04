package chartgen_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// BenchmarkHelmTemplate is the Helm path for one run, in process: what
// `helm template` / `helm install` does with charts/nemo-rl-run after
// start-up (chart loaded from disk, values coalesced and checked against
// values.schema.json, templates rendered, manifests sorted). The chart
// carries every packaged profile's rendered objects, so its cost is the
// chart's size, not a render.
func BenchmarkHelmTemplate(b *testing.B) {
	atRoot(b)
	profile := index(b).Profiles[0].Name
	for _, tc := range []struct {
		mode  runparams.Mode
		state runparams.State
	}{{runparams.RayJob, ""}, {runparams.RayCluster, ""}, {runparams.RayJob, runparams.Stopped}} {
		vals := run{profile: profile, mode: tc.mode, user: "ann", runID: "e7", overrides: twoOverrides, state: tc.state}.values(b)
		name := string(tc.mode)
		if tc.state != "" {
			name += "/" + string(tc.state) // the stop plan applied to the substituted documents
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := loader.Load(chartDir)
				if err != nil {
					b.Fatal(err)
				}
				manifest, _, err := helmTemplate(c, vals, "team-a")
				if err != nil {
					b.Fatal(err)
				}
				if !strings.Contains(manifest, "kind: RayJob") {
					b.Fatal("no RayJob rendered")
				}
			}
		})
	}
}
