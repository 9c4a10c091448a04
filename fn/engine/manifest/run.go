package manifest

import "github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"

// Run naming: what a run name (--name, a NemoRLRun's metadata.name, a Helm
// release name) renames, and what each object's identity is.
//
// Without a name every object keeps the profile's names (nrl-k8s's). With
// one, every object the run owns is named after it, so two runs of one
// profile by one user never share an object:
//
//	rayjob mode      RayJob <name>; DRA objects compute-domain-<name>-<role>, roce-<name>-<role>
//	raycluster mode  RayClusters <name>-<role>; their DRA objects as above; daemon jobs
//	                 <name>-<role>-daemon; the training job <name>
//
// Long-lived clusters are shared on purpose in raycluster mode: rendered
// without a name, they keep the profile's names and every --run-id submits
// one more training job to them. Their instance is then the cluster set (the
// training cluster's name) and the run id labels only the training job, so
// applying a second run id changes no shared object. A named raycluster run
// brings up a cluster set of its own.
//
// Profile `deployments:` (and their Services) are services that pods reach
// by the fixed names the profile gives them (e.g. a sandbox host in an env
// var): they are shared by every run of the user and keep their names; each
// is its own instance, and carries no run id or run labels.

// named: a run name was given; without one the profile's names stay.
func (b *builder) named() bool { return b.p.Name != "" }

// clusterName is the RayCluster name of a role in raycluster mode.
func (b *builder) clusterName(role string, c *profile.Cluster) string {
	if b.named() {
		return b.p.Name + "-" + role
	}
	return c.Name
}

// draBase is what DRA object names are made from: the run when named, else
// the cluster (nrl-k8s's names).
func (b *builder) draBase(c *profile.Cluster) string {
	if b.named() {
		return b.p.Name
	}
	return c.Name
}

// rayJobName is the RayJob's name in rayjob mode.
func (b *builder) rayJobName(c *profile.Cluster) string {
	if b.named() {
		return b.p.Name
	}
	if n := b.in.Launch.RayJob.Name; n != nil && *n != "" {
		return *n
	}
	return c.Name
}

// clusterSetName is the unnamed raycluster run's instance: the training
// cluster, else the first cluster declared.
func (b *builder) clusterSetName() string {
	if b.named() {
		return b.p.Name
	}
	if c := b.in.Kuberay.Training; c != nil {
		return c.Name
	}
	if roles := b.in.Kuberay.ByRole(); len(roles) > 0 {
		return roles[0].Cluster.Name
	}
	return ""
}

// runIdentity is the identity of the objects the run owns.
func (b *builder) runIdentity(instance string) identity {
	return identity{instance: instance, owner: b.p.User, runID: b.p.RunID, labels: b.p.Labels, annotations: b.p.Annotations}
}

// clusterIdentity is the identity of a raycluster-mode cluster, its DRA
// objects and daemons: the run's when named, else the shared cluster set's.
func (b *builder) clusterIdentity() identity {
	if b.named() {
		return b.runIdentity(b.p.Name)
	}
	return identity{instance: b.clusterSetName(), owner: b.p.User, labels: b.p.Labels, annotations: b.p.Annotations}
}

// sharedIdentity is a profile deployment's (see above). Rendered on their
// own (OnlyDeployments) they belong to that one apply or release, and take
// its labels and annotations.
func (b *builder) sharedIdentity(name string) identity {
	if b.p.OnlyDeployments {
		return identity{instance: name, owner: b.p.User, labels: b.p.Labels, annotations: b.p.Annotations}
	}
	return identity{instance: name, owner: b.p.User}
}

// image is the image of every container of the run's pods.
func (b *builder) image() string {
	if b.p.Image != "" {
		return b.p.Image
	}
	return b.in.Image
}
