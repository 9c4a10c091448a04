package manifest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// A cluster's spec is a patched copy (the profile stays as written): the
// run's image on every container, the run's labels on every pod, segments
// split, the workers' claims pointed at the run's DRA objects.
func TestRenderClusterSpec(t *testing.T) {
	const prof = "image: img\nnamespace: team\ndra: {roce: {deviceClassName: roce.example, count: 4}}\nkuberay:\n  training:\n    name: c\n%s    spec:\n" +
		"      headGroupSpec: {template: {spec: {containers: [{name: h, image: old}]}}}\n" +
		"      workerGroupSpecs: [{groupName: w, replicas: 4, template: {spec: {containers: [{name: w}], resourceClaims: [{name: roce-channel}]}}}]\n"
	for _, tc := range []struct {
		name, extra string
		groups      int
		err         string
	}{
		{"one group", "", 1, ""},
		{"two segments", "    segmentSize: 2\n", 2, ""},
		{"segment size out of range", "    segmentSize: 0\n", 0, "segmentSize=0 is outside 1.."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{in: infraOf(t, fmt.Sprintf(prof, tc.extra)), p: runparams.Params{Run: runparams.Run{Name: "run"}}}
			c := b.in.Kuberay.Training
			id := b.runIdentity("run")
			r, err := b.renderClusterSpec(id, "training", c)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "old", c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image, "the profile is not modified")
			require.Len(t, r.spec.WorkerGroupSpecs, tc.groups)
			require.Equal(t, "img", r.spec.HeadGroupSpec.Template.Spec.Containers[0].Image)
			for _, g := range r.spec.WorkerGroupSpecs {
				require.Equal(t, "img", g.Template.Spec.Containers[0].Image)
				require.Equal(t, "run", g.Template.Labels[vocab.InstanceLabel])
				require.Equal(t, "roce-run-training", *g.Template.Spec.ResourceClaims[0].ResourceClaimTemplateName)
			}
			objs := b.draObjects(id, c, r.claims)
			require.Len(t, objs, 1)
			tmpl := objs[0].(*resourcev1.ResourceClaimTemplate)
			require.Equal(t, []any{"roce-run-training", "team", "roce.example", int64(4)},
				[]any{tmpl.Name, tmpl.Namespace, tmpl.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName, tmpl.Spec.Spec.Devices.Requests[0].Exactly.Count})
			rc := b.newRayCluster(id, "training", c, r.spec)
			require.Equal(t, []string{"run-training", "team", "run"}, []string{rc.Name, rc.Namespace, rc.Labels[vocab.InstanceLabel]})
		})
	}
}
