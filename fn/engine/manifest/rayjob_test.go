package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

// The jobs a run submits: the RayJob that creates its cluster, a daemon
// and a training job submitted to a long-lived cluster.
func TestJobs(t *testing.T) {
	const prof = "namespace: team\nlaunch: {entrypoint: 'python examples/run_grpo.py', env: {B: 'x y', A: '1'}, rayjob: {submissionMode: HTTPMode, shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: 60, activeDeadlineSeconds: 5}}\n" +
		"kuberay: {training: {name: train, daemon: {entrypoint: 'python d.py', submissionId: sub, env: {K: v}}}}"
	for _, tc := range []struct {
		name, profile string
		p             runparams.Run
		noScript      bool
		check         func(t *testing.T, b *builder)
	}{
		{"RayJob", prof, runparams.Run{}, false, func(t *testing.T, b *builder) {
			job, err := b.newRayJob(identity{instance: "train"}, "train", b.in.Kuberay.Training, nil)
			require.NoError(t, err)
			require.Equal(t, "python examples/run_grpo.py", job.Spec.Entrypoint)
			require.Equal(t, []any{"HTTPMode", true, int32(60), int32(5)},
				[]any{string(job.Spec.SubmissionMode), job.Spec.ShutdownAfterJobFinishes, job.Spec.TTLSecondsAfterFinished, *job.Spec.ActiveDeadlineSeconds})
		}},
		{"empty entrypoint", "launch: {entrypoint: ' '}\nkuberay: {training: {name: t}}", runparams.Run{}, false, func(t *testing.T, b *builder) {
			_, err := b.newRayJob(identity{}, "t", b.in.Kuberay.Training, nil)
			require.EqualError(t, err, "launch.entrypoint: infra.launch.entrypoint is empty; expected the training command")
		}},
		{"entrypoint the resolve stage did not read", prof, runparams.Run{}, true, func(t *testing.T, b *builder) {
			_, err := b.trainingEntrypoint()
			require.ErrorContains(t, err, "was not read by the resolve stage")
		}},
		{"daemon", prof, runparams.Run{}, false, func(t *testing.T, b *builder) {
			job, err := b.newDaemonJob(identity{}, "training", b.in.Kuberay.Training)
			require.NoError(t, err)
			require.Equal(t, []string{"train-daemon", "sub", "env_vars:\n  K: v\n", "train"},
				[]string{job.Name, job.Spec.JobId, job.Spec.RuntimeEnvYAML, job.Spec.ClusterSelector["ray.io/cluster"]})
			require.False(t, job.Spec.ShutdownAfterJobFinishes, "the cluster outlives the job")
		}},
		{"training job, run id", prof, runparams.Run{RunID: "r1"}, false, func(t *testing.T, b *builder) {
			job, err := b.newTrainingJob(b.in.Kuberay.Training)
			require.NoError(t, err)
			require.Equal(t, []string{"train-train-r1", "r1", "export A=1\nexport B='x y'\nexport NRL_K8S_RUN_ID=r1\npython examples/run_grpo.py"},
				[]string{job.Name, job.Spec.JobId, job.Spec.Entrypoint})
		}},
		{"training job, named run", prof, runparams.Run{Name: "sweep"}, false, func(t *testing.T, b *builder) {
			job, err := b.newTrainingJob(b.in.Kuberay.Training)
			require.NoError(t, err)
			require.Equal(t, []string{"sweep", "sweep-training"}, []string{job.Name, job.Spec.ClusterSelector["ray.io/cluster"]})
		}},
		{"training job, bad variable name", "launch: {entrypoint: x, env: {'A-B': v}}\nkuberay: {training: {name: t}}", runparams.Run{}, false, func(t *testing.T, b *builder) {
			_, err := b.newTrainingJob(b.in.Kuberay.Training)
			require.ErrorContains(t, err, "launch.env.A-B: is not a shell variable name")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{in: infraOf(t, tc.profile), p: runparams.Params{Run: tc.p}}
			if ep := b.in.Launch.Entrypoint; ep != nil && !tc.noScript {
				s := entrypoint.Parse(*ep)
				b.ep = &s
			}
			tc.check(t, b)
		})
	}
}
