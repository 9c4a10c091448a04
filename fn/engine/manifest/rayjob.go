package manifest

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// trainingEntrypoint is launch.entrypoint pointed at the run's --config,
// with the run's extra overrides.
func (b *builder) trainingEntrypoint() (string, error) {
	if b.in.Launch.Entrypoint == nil || strings.TrimSpace(*b.in.Launch.Entrypoint) == "" {
		return "", errAt("launch.entrypoint", "infra.launch.entrypoint is empty; expected the training command")
	}
	if b.ep == nil {
		return "", errAt("launch.entrypoint", "was not read by the resolve stage; expected manifest.Input.Entrypoint (effective.Recipe.Entrypoint)")
	}
	ep, err := b.ep.ForRun(b.p.Config, b.overrides)
	if err != nil {
		return "", errAt("launch.entrypoint", "%v", err)
	}
	return ep, nil
}

// newRayJob is the ephemeral run (§4.5): KubeRay creates the cluster from
// rayClusterSpec, runs the entrypoint verbatim and tears the cluster down.
// HTTPMode by default: K8sJobMode's extra Job breaks KAI gang scheduling.
func (b *builder) newRayJob(id identity, name string, c *profile.Cluster, spec *rayv1.RayClusterSpec) (*rayv1.RayJob, error) {
	in := b.in
	ep, err := b.trainingEntrypoint()
	if err != nil {
		return nil, err
	}
	opts := in.Launch.RayJob
	job := &rayv1.RayJob{
		TypeMeta: metav1.TypeMeta{APIVersion: vocab.RayAPIVersion, Kind: "RayJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   in.Namespace,
			Labels:      id.objectLabels(in.Labels, c.Labels, admissionLabels(in)),
			Annotations: id.objectAnnotations(in.Annotations, merged(c.Annotations, gangAnnotations(in))),
		},
		Spec: rayv1.RayJobSpec{
			Entrypoint:               ep,
			SubmissionMode:           rayv1.JobSubmissionMode(opts.SubmissionMode),
			ShutdownAfterJobFinishes: opts.ShutdownAfterJobFinishes,
			TTLSecondsAfterFinished:  int32(opts.TTLSecondsAfterFinished), //nolint:gosec // G115: profile validation bounds it to [0, MaxInt32]
			Suspend:                  opts.Suspend,
			RayClusterSpec:           spec,
		},
	}
	job.Spec.ManagedBy = managedBy(in)
	if opts.ActiveDeadlineSeconds != nil {
		job.Spec.ActiveDeadlineSeconds = ptr(int32(*opts.ActiveDeadlineSeconds)) //nolint:gosec // G115: profile validation bounds it to MaxInt32
	}
	return job, nil
}

// submitJob is a RayJob that runs on an existing RayCluster (clusterSelector)
// instead of creating one: KubeRay's own way to submit to a long-lived
// cluster, so the submission is a reviewable object, not a CLI side effect.
func (b *builder) submitJob(id identity, role string, c *profile.Cluster, name, entrypoint string, labels map[string]string) *rayv1.RayJob {
	in := b.in
	return &rayv1.RayJob{
		TypeMeta: metav1.TypeMeta{APIVersion: vocab.RayAPIVersion, Kind: "RayJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: in.Namespace,
			Labels:    id.objectLabels(in.Labels, c.Labels, labels),
			// Cluster annotations configure the cluster KubeRay creates from a
			// RayJob; a job submitted to an existing cluster takes only the
			// profile's.
			Annotations: id.objectAnnotations(in.Annotations, nil),
		},
		Spec: rayv1.RayJobSpec{
			Entrypoint:      entrypoint,
			SubmissionMode:  rayv1.JobSubmissionMode(in.Launch.RayJob.SubmissionMode),
			ClusterSelector: map[string]string{vocab.RayClusterLabel: b.clusterName(role, c)},
			// The cluster outlives the job: never shut it down from here.
			// No TTL either: KubeRay deletes nothing for a clusterSelector
			// job (its controller returns before any deletion policy), so
			// the object stays, with its status, until the user deletes
			// it; and KubeRay refuses a TTL without shutdownAfterJobFinishes.
			ShutdownAfterJobFinishes: false,
		},
	}
}

// newDaemonJob submits a role's daemon; daemons get their env through
// runtime_env.env_vars, as in nrl-k8s.
func (b *builder) newDaemonJob(id identity, role string, c *profile.Cluster) (*rayv1.RayJob, error) {
	d := c.Daemon
	name := b.clusterName(role, c) + "-daemon"
	job := b.submitJob(id, role, c, name, d.Entrypoint, map[string]string{vocab.JobLabel: "daemon"})
	if d.SubmissionID != nil && *d.SubmissionID != "" {
		job.Spec.JobId = *d.SubmissionID
	}
	if len(d.Env) > 0 {
		env, err := yaml.Marshal(map[string]any{"env_vars": d.Env})
		if err != nil {
			return nil, errAt("kuberay."+role+".daemon.env", "%v", err)
		}
		job.Spec.RuntimeEnvYAML = string(env)
	}
	return job, nil
}

// newTrainingJob submits training to the long-lived training cluster. Env is
// exported in front of the entrypoint (nrl-k8s's port-forward submitter does
// the same: Ray refuses to merge runtime_env env_vars with the cluster's).
func (b *builder) newTrainingJob(c *profile.Cluster) (*rayv1.RayJob, error) {
	in, p := b.in, b.p
	ep, err := b.trainingEntrypoint()
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range in.Launch.Env {
		env[k] = v
	}
	if p.RunID != "" {
		if _, set := env["NRL_K8S_RUN_ID"]; !set {
			env["NRL_K8S_RUN_ID"] = p.RunID
		}
	}
	var lines []string
	for _, k := range tree.SortedKeys(env) {
		if !profile.EnvNameRE.MatchString(k) {
			return nil, errAt("launch.env."+k, "is not a shell variable name; expected [A-Za-z_][A-Za-z0-9_]*")
		}
		lines = append(lines, fmt.Sprintf("export %s=%s", k, shell.Quote(env[k])))
	}
	if len(lines) > 0 {
		ep = strings.Join(lines, "\n") + "\n" + ep
	}
	name := c.Name + "-train"
	if p.RunID != "" {
		name += "-" + p.RunID
	}
	if p.Name != "" {
		name = p.Name
	}
	id := b.runIdentity(b.clusterSetName())
	job := b.submitJob(id, "training", c, name, ep, map[string]string{vocab.JobLabel: "training"})
	if p.RunID != "" {
		job.Spec.JobId = p.RunID
	}
	return job, nil
}
