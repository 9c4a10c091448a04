package manifest

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

// A profile that dispatches by MultiKueue puts spec.managedBy on the object
// Kueue admits, and refuses a render MultiKueue cannot dispatch whole.
func TestDispatch(t *testing.T) {
	const (
		training = "kuberay:\n  training: {name: t, spec: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}}\n"
		gen      = "  generation: {name: g, spec: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}}\n"
		ep       = "launch: {entrypoint: 'python examples/run_grpo.py'}\n"
		mk       = "scheduler: {kind: kueue, queue: lab, dispatch: multikueue}\n"
		beside   = "scheduler: {kind: kai, queue: rl, kueue: {queue: lab, dispatch: multikueue}}\n"
	)
	for _, tc := range []struct {
		name, profile string
		mode          runparams.Mode
		managed       []string // kind/name of each object with MultiKueue's managedBy
		refused       string   // the error's field, "" for none
		says          string
	}{
		{"rayjob", mk + training + ep, runparams.RayJob, []string{"RayJob/t"}, "", ""},
		{"rayjob beside KAI", beside + training + ep, runparams.RayJob, []string{"RayJob/t"}, "", ""},
		{"not dispatched", "scheduler: {kind: kueue, queue: lab}\n" + training + ep, runparams.RayJob, nil, "", ""},
		{"one RayCluster, nothing submitted", mk + training, runparams.RayCluster, []string{"RayCluster/t"}, "", ""},
		{"raycluster with a training job", mk + training + ep, runparams.RayCluster, nil, "scheduler.dispatch", "RayJob t-train is submitted to an existing RayCluster by clusterSelector"},
		{"two RayClusters", beside + training + gen, runparams.RayCluster, nil, "scheduler.kueue.dispatch", "renders 2 RayClusters (g, t)"},
		{"dev", mk + "dev: {pvcName: ws}", runparams.Dev, nil, "scheduler.dispatch", "dev mode renders a Pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infraOf(t, tc.profile)
			bi := Input{Infra: in, File: "p.yaml", Params: runparams.Params{Run: runparams.Run{Mode: tc.mode, User: "alice"}}}
			if in.Launch.Entrypoint != nil {
				s := entrypoint.Parse(*in.Launch.Entrypoint)
				bi.Entrypoint = &s
			}
			objs, ds := Build(bi)
			var managed []string
			for _, o := range objs {
				switch v := o.(type) {
				case *rayv1.RayJob:
					if v.Spec.ManagedBy != nil {
						managed = append(managed, "RayJob/"+v.Name+" "+*v.Spec.ManagedBy)
					}
				case *rayv1.RayCluster:
					if v.Spec.ManagedBy != nil {
						managed = append(managed, "RayCluster/"+v.Name+" "+*v.Spec.ManagedBy)
					}
				}
			}
			var want []string
			for _, m := range tc.managed {
				want = append(want, m+" kueue.x-k8s.io/multikueue")
			}
			require.Equal(t, want, managed)
			if tc.refused == "" {
				require.False(t, ds.HasErrors(), "%v", ds)
				return
			}
			errs := ds.Errors()
			require.Len(t, errs, 1, "%v", ds)
			require.Equal(t, tc.refused, errs[0].Field)
			require.Equal(t, "p.yaml", errs[0].File)
			require.Contains(t, errs[0].Message, tc.says)
			require.Contains(t, errs[0].Message, "expected rayjob mode")
			require.Nil(t, objs)
		})
	}
}
