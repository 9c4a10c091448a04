// Package build turns a resolved profile and the run parameters into typed
// Kubernetes objects: RayJob or RayClusters, the DRA objects their workers
// claim, Deployments and Services, and the dev pod. It does no I/O.
package build

import (
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
	// Name overrides the RayJob name (rayjob mode) or the training job name.
	Name string
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
	var ds diag.List
	var render func(*profile.Infra, Params, *diag.List, string) ([]Object, error)
	switch p.Mode {
	case RayJob:
		render = rayJobMode
	case RayCluster:
		render = rayClusterMode
	case Dev:
		return []Object{{Obj: devPod(in, p.User)}}, ds
	default:
		ds.Errorf("", "mode", "found %q; expected one of rayjob, raycluster, dev", p.Mode)
		return nil, ds
	}
	in, err := withSchedulerLabels(in)
	if err != nil {
		ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
		return nil, ds
	}
	out, err := render(in, p, &ds, file)
	if err != nil {
		ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
		return nil, ds
	}
	deps, err := deploymentObjects(in)
	if err != nil {
		ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
		return nil, ds
	}
	return append(out, deps...), ds
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
	if fe, ok := err.(*fieldError); ok {
		return fe.field
	}
	return ""
}

func msgOf(err error) string {
	if fe, ok := err.(*fieldError); ok {
		return fe.msg
	}
	return err.Error()
}

func rayJobMode(in *profile.Infra, p Params, ds *diag.List, file string) ([]Object, error) {
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
	r, err := renderClusterSpec(in, "training", c)
	if err != nil {
		return nil, clusterErr("training", err)
	}
	job, err := newRayJob(in, c, r.spec, p)
	if err != nil {
		return nil, err
	}
	out := draObjects(in, c, r.claims)
	if p.RecipeYAML != "" {
		cm, err := recipeConfigMap(in, c, job.Name, p, &job.Spec.RayClusterSpec.HeadGroupSpec.Template)
		if err != nil {
			return nil, err
		}
		out = append(out, Object{Obj: cm})
	}
	return append(out, Object{Obj: job}), nil
}

func rayClusterMode(in *profile.Infra, p Params, ds *diag.List, file string) ([]Object, error) {
	if p.RecipeYAML != "" {
		// A long-lived cluster's mounted ConfigMap would change under a
		// running job, and the kubelet updates it late.
		return nil, errAt("launch.recipeSource", "is configMap, which rayjob mode supports only (the recipe is mounted into the cluster KubeRay creates for the job); expected --mode rayjob, or recipeSource checkout")
	}
	var out []Object
	roles := in.Kuberay.ByRole()
	if len(roles) == 0 {
		ds.Warnf(file, "kuberay", "declares no cluster: no RayCluster is rendered, only what the profile has (deployments)")
		return nil, nil
	}
	for _, rc := range roles {
		r, err := renderClusterSpec(in, rc.Role, rc.Cluster)
		if err != nil {
			return nil, clusterErr(rc.Role, err)
		}
		out = append(out, draObjects(in, rc.Cluster, r.claims)...)
		out = append(out, Object{Obj: newRayCluster(in, rc.Cluster, r.spec)})
	}
	for _, rc := range roles {
		if rc.Cluster.Daemon != nil {
			job, err := newDaemonJob(in, rc.Role, rc.Cluster)
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
	job, err := newTrainingJob(in, in.Kuberay.Training, p)
	if err != nil {
		return nil, err
	}
	return append(out, Object{Obj: job}), nil
}

// clusterErr keeps a field error's own path; other errors are about the
// worker groups (segment splitting).
func clusterErr(role string, err error) error {
	if _, ok := err.(*fieldError); ok {
		return err
	}
	return errAt("kuberay."+role+".spec.workerGroupSpecs", "%v", err)
}

func deploymentObjects(in *profile.Infra) ([]Object, error) {
	var out []Object
	for _, k := range tree.SortedKeys(in.Deployments) {
		d := in.Deployments[k]
		dep := newDeployment(in, d)
		if err := applyScheduler(in, "deployments."+k+".spec.template", &dep.Spec.Template); err != nil {
			return nil, err
		}
		out = append(out, Object{Obj: dep})
		if svc := newService(in, d); svc != nil {
			out = append(out, Object{Obj: svc})
		}
	}
	return out, nil
}
