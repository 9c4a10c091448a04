// Package build turns a resolved profile and the run parameters into typed
// Kubernetes objects: RayJob or RayClusters, the DRA objects their workers
// claim, Deployments and Services, and the dev pod. It does no I/O.
package build

import (
	"errors"
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tree"
)

// Mode is what a render produces.
type Mode string

const (
	// RayJob: one ephemeral RayJob (KubeRay creates and tears down the cluster).
	RayJob Mode = "rayjob"
	// RayCluster: long-lived RayClusters plus RayJobs submitted to them.
	RayCluster Mode = "raycluster"
	// Dev: the CPU-only dev pod.
	Dev Mode = "dev"
)

// Modes lists the valid modes.
var Modes = []Mode{RayJob, RayCluster, Dev}

// Params are the run parameters that are not in the profile.
type Params struct {
	Mode Mode
	// RunID names this run: it suffixes the submitted job and is exported as
	// NRL_K8S_RUN_ID to the training entrypoint in raycluster mode.
	RunID string
	// User is the normalised submitting user.
	User string
	// Name is the run name: when set, every object the run owns is named
	// after it (run.go); it is the instance label either way.
	Name string
	// Labels and Annotations are the run's own (a NemoRLRun's metadata,
	// --label, the chart's values): they go onto every object of the run and
	// every pod template (labels.go).
	Labels, Annotations map[string]string
	// Image, when set, replaces the image of every container of the run's
	// pods (Ray pods, the dev pod); profile deployments keep theirs.
	Image string
	// NoDeployments leaves out the profile's deployments and their Services:
	// they are shared by a user's runs (run.go), so only one release or
	// apply should own them.
	NoDeployments bool
	// Overrides are extra Hydra overrides appended to the training driver.
	Overrides []string
	// Config, when set, is the --config every driver call is pointed at: the
	// checked recipe as the pod sees it (check.PodConfig).
	Config string
	// RecipeYAML, under launch.recipeSource=configMap, is the merged recipe
	// the run ships in a ConfigMap (RecipeYAML).
	RecipeYAML string
}

// Object is one rendered object (a typed KubeRay / Kubernetes struct).
type Object struct {
	Obj any
}

// Build renders every object the run needs. Findings that do not stop the
// render (warnings) are returned beside the objects.
func Build(in *profile.Infra, file string, p Params) ([]Object, diag.List) {
	b := &builder{in: in, p: p, file: file}
	if errs := checkRunMetadata(p); len(errs) > 0 {
		for _, e := range errs {
			b.ds.Errorf("", e.field, "%s", e.msg)
		}
		return nil, b.ds
	}
	var render func() ([]Object, error)
	switch p.Mode {
	case RayJob:
		render = b.rayJobMode
	case RayCluster:
		render = b.rayClusterMode
	case Dev:
		return []Object{{Obj: b.devPod()}}, b.ds
	default:
		b.ds.Errorf("", "mode", "found %q; expected one of rayjob, raycluster, dev", p.Mode)
		return nil, b.ds
	}
	in, err := withSchedulerLabels(b.in)
	if err != nil {
		b.ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
		return nil, b.ds
	}
	b.in = in
	out, err := render()
	if err != nil {
		b.ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
		return nil, b.ds
	}
	if !p.NoDeployments {
		deps, err := b.deploymentObjects()
		if err != nil {
			b.ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
			return nil, b.ds
		}
		out = append(out, deps...)
	}
	return out, b.ds
}

// builder is one render: the profile, the run parameters and the findings.
type builder struct {
	in   *profile.Infra
	p    Params
	file string
	ds   diag.List
}

// fieldError is an error tied to a profile field.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func errAt(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

func fieldOf(err error) string {
	if fe, ok := errors.AsType[*fieldError](err); ok {
		return fe.field
	}
	return ""
}

func msgOf(err error) string {
	if fe, ok := errors.AsType[*fieldError](err); ok {
		return fe.msg
	}
	return err.Error()
}

func (b *builder) rayJobMode() ([]Object, error) {
	in, ds, file := b.in, &b.ds, b.file
	c := in.Kuberay.Training
	if c == nil {
		// A profile without the training cluster (deployments only, or a
		// base layer) renders what it has, as nrl-k8s's check does.
		ds.Warnf(file, "kuberay.training", "is not defined: no RayJob is rendered, only what the profile has (deployments)")
		return nil, nil
	}
	for _, rc := range in.Kuberay.ByRole() {
		if rc.Role != "training" {
			ds.Warnf(file, "kuberay."+rc.Role, "rayjob mode renders only the training cluster; cluster %q is not part of this run (use --mode raycluster)", rc.Cluster.Name)
		}
	}
	name := b.rayJobName(c)
	id := b.runIdentity(name)
	r, err := b.renderClusterSpec(id, "training", c)
	if err != nil {
		return nil, clusterErr("training", err)
	}
	job, err := b.newRayJob(id, name, c, r.spec)
	if err != nil {
		return nil, err
	}
	out := b.draObjects(id, c, r.claims)
	if b.p.RecipeYAML != "" {
		cm, err := b.recipeConfigMap(id, c, job.Name, &job.Spec.RayClusterSpec.HeadGroupSpec.Template)
		if err != nil {
			return nil, err
		}
		out = append(out, Object{Obj: cm})
	}
	return append(out, Object{Obj: job}), nil
}

func (b *builder) rayClusterMode() ([]Object, error) {
	in, ds, file := b.in, &b.ds, b.file
	if b.p.RecipeYAML != "" {
		// A long-lived cluster's mounted ConfigMap would change under a
		// running job, and the kubelet updates it late.
		return nil, errAt("launch.recipeSource", "is configMap, which rayjob mode supports only (the recipe is mounted into the cluster KubeRay creates for the job); expected --mode rayjob, or recipeSource checkout")
	}
	var out []Object
	cid := b.clusterIdentity()
	roles := in.Kuberay.ByRole()
	if len(roles) == 0 {
		ds.Warnf(file, "kuberay", "declares no cluster: no RayCluster is rendered, only what the profile has (deployments)")
		return nil, nil
	}
	for _, rc := range roles {
		r, err := b.renderClusterSpec(cid, rc.Role, rc.Cluster)
		if err != nil {
			return nil, clusterErr(rc.Role, err)
		}
		out = append(out, b.draObjects(cid, rc.Cluster, r.claims)...)
		out = append(out, Object{Obj: b.newRayCluster(cid, rc.Role, rc.Cluster, r.spec)})
	}
	for _, rc := range roles {
		if rc.Cluster.Daemon != nil {
			job, err := b.newDaemonJob(cid, rc.Role, rc.Cluster)
			if err != nil {
				return nil, err
			}
			out = append(out, Object{Obj: job})
		}
	}
	if in.Kuberay.Training == nil {
		ds.Warnf(file, "kuberay.training", "no training cluster: only the clusters are rendered, no training job")
		return out, nil
	}
	if in.Launch.Entrypoint == nil || *in.Launch.Entrypoint == "" {
		ds.Warnf(file, "launch.entrypoint", "is empty: the clusters are rendered without a training job")
		return out, nil
	}
	job, err := b.newTrainingJob(in.Kuberay.Training)
	if err != nil {
		return nil, err
	}
	return append(out, Object{Obj: job}), nil
}

// clusterErr keeps a field error's own path; other errors are about the
// worker groups (segment splitting).
func clusterErr(role string, err error) error {
	if _, ok := errors.AsType[*fieldError](err); ok {
		return err
	}
	return errAt("kuberay."+role+".spec.workerGroupSpecs", "%v", err)
}

func (b *builder) deploymentObjects() ([]Object, error) {
	var out []Object
	for _, k := range tree.SortedKeys(b.in.Deployments) {
		d := b.in.Deployments[k]
		id := b.sharedIdentity(d.Name)
		dep := newDeployment(b.in, id, d)
		if err := applyScheduler(b.in, "deployments."+k+".spec.template", &dep.Spec.Template); err != nil {
			return nil, err
		}
		out = append(out, Object{Obj: dep})
		if svc := newService(b.in, id, d); svc != nil {
			out = append(out, Object{Obj: svc})
		}
	}
	return out, nil
}
