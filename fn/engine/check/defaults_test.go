package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// A default is listed only for a feature the render uses and only while
// its value is defaults.yaml's.
func TestAppliedDefaults(t *testing.T) {
	roce := "kind: ResourceClaimTemplate\nmetadata: {name: r}\nspec: {spec: {devices: {requests: [{name: roce}]}}}"
	// What the loaded profile holds from defaults.yaml.
	const quiet = "namespace: team\nhf_cache: {kind: none}\ncheckpoints: {kind: none}\ndra: {roce: {deviceClassName: roce.networking.k8s.aws, count: 8}}\n"
	for _, tc := range []struct {
		name, profile string
		mode          runparams.Mode
		docs          []string
		want          []string
	}{
		{"nothing used", quiet, runparams.RayCluster, nil, nil},
		{"default namespace", "namespace: default\nhf_cache: {kind: none}\ncheckpoints: {kind: none}", runparams.RayCluster, nil, []string{"namespace=default"}},
		{"RoCE claim", quiet + cluster(1, 8, ""), runparams.RayCluster, []string{roce},
			[]string{"dra.roce.deviceClassName=roce.networking.k8s.aws", "dra.roce.count=8"}},
		{"RoCE set by the cluster", quiet + cluster(1, 8, "    dra: {roce: {deviceClassName: mine, count: 2}}"), runparams.RayCluster, []string{roce}, nil},
		{"RayJob knobs", quiet + "launch: {rayjob: {submissionMode: HTTPMode, ttlSecondsAfterFinished: 60}}", runparams.RayJob, []string{"kind: RayJob\nmetadata: {name: j}"},
			[]string{"launch.rayjob.submissionMode=HTTPMode"}},
		{"RayJob knobs outside rayjob mode", quiet + "launch: {rayjob: {submissionMode: HTTPMode}}", runparams.RayCluster, []string{"kind: RayJob\nmetadata: {name: j}"}, nil},
		{"mount paths", "namespace: team\nhf_cache: {kind: pvc, mountPath: /root/.cache/huggingface}\ncheckpoints: {kind: pvc, mountPath: /ckpt}", runparams.RayCluster, nil,
			[]string{"hf_cache.mountPath=/root/.cache/huggingface"}},
		{"dev mount", quiet + "dev: {pvcName: ws}", runparams.Dev, nil, []string{"dev.mountPath=" + profile.DevWorkspacePath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var docs []rendered.Doc
			for _, d := range tc.docs {
				docs = append(docs, docOf(t, d))
			}
			var got []string
			for _, d := range AppliedDefaults(&profile.Loaded{Infra: infraOf(t, tc.profile)}, tc.mode, docs) {
				got = append(got, d.Key+"="+d.Value)
			}
			require.Equal(t, tc.want, got)
		})
	}
}
