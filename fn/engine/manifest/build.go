// Package manifest turns a resolved profile and the run parameters into typed
// Kubernetes objects: RayJob or RayClusters, the DRA objects their workers
// claim, Deployments and Services, and the dev pod. It does no I/O.
package manifest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Input is what the build reads: the profile, the run's parameters, and
// what the resolve stage read for the pods.
type Input struct {
	Infra  *profile.Infra
	File   string
	Params runparams.Params
	// Entrypoint is launch.entrypoint as the resolve stage read it
	// (effective.Recipe.Entrypoint), nil when the profile has none: the
	// build edits that reading and never reads the text again.
	Entrypoint *entrypoint.Script
	// Overrides are the run's recipe overrides, parsed once by the
	// pipeline, appended to the training driver call.
	Overrides []hydra.Override
}

// Build renders every object the run needs. Findings that do not stop the
// render (warnings) are returned beside the objects.
func Build(bi Input) ([]any, diag.List) {
	in, file, p := bi.Infra, bi.File, bi.Params
	b := &builder{in: in, p: p, file: file, ep: bi.Entrypoint, overrides: bi.Overrides}
	if errs := checkRunMetadata(p); len(errs) > 0 {
		for _, e := range errs {
			b.ds.Errorf("", e.field, "%s", e.msg)
		}
		return nil, b.ds
	}
	if p.OnlyDeployments {
		return b.sharedServices()
	}
	var render func() ([]any, error)
	switch p.Mode {
	case runparams.RayJob:
		render = b.rayJobMode
	case runparams.RayCluster:
		render = b.rayClusterMode
	case runparams.Dev:
		if err := dispatchable(b.in, p.Mode, nil); err != nil {
			b.ds.Errorf(file, fieldOf(err), "%s", msgOf(err))
			return nil, b.ds
		}
		pod := b.devPod() // before b.ds is read: it may warn
		return []any{pod}, b.ds
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
	if err == nil {
		err = dispatchable(b.in, p.Mode, out)
	}
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
	in        *profile.Infra
	p         runparams.Params
	file      string
	ep        *entrypoint.Script
	overrides []hydra.Override
	ds        diag.List
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

func (b *builder) rayJobMode() ([]any, error) {
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
		out = append(out, cm)
	}
	return append(out, job), nil
}

func (b *builder) rayClusterMode() ([]any, error) {
	in, ds, file := b.in, &b.ds, b.file
	if b.p.RecipeYAML != "" {
		// A long-lived cluster's mounted ConfigMap would change under a
		// running job, and the kubelet updates it late.
		return nil, errAt("launch.recipeSource", "is configMap, which rayjob mode supports only (the recipe is mounted into the cluster KubeRay creates for the job); expected rayjob mode (nrl-k8s --mode rayjob, the chart's mode=rayjob), or recipeSource checkout")
	}
	var out []any
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
		out = append(out, b.newRayCluster(cid, rc.Role, rc.Cluster, r.spec))
	}
	for _, rc := range roles {
		if rc.Cluster.Daemon != nil {
			job, err := b.newDaemonJob(cid, rc.Role, rc.Cluster)
			if err != nil {
				return nil, err
			}
			out = append(out, job)
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
	return append(out, job), nil
}

// clusterErr keeps a field error's own path; other errors are about the
// worker groups (segment splitting).
func clusterErr(role string, err error) error {
	if _, ok := errors.AsType[*fieldError](err); ok {
		return err
	}
	return errAt("kuberay."+role+".spec.workerGroupSpecs", "%v", err)
}

// sharedServices renders only the profile's deployments and their Services
// (runparams.Params.OnlyDeployments), in any mode: they do not depend on it.
func (b *builder) sharedServices() ([]any, diag.List) {
	if len(b.in.Deployments) == 0 {
		b.ds.Errorf(b.file, "deployments", "the profile declares none, so there are no shared services to render; expected a profile with deployments: (without --only-deployments the run renders what it has)")
		return nil, b.ds
	}
	in, err := withSchedulerLabels(b.in)
	if err != nil {
		b.ds.Errorf(b.file, fieldOf(err), "%s", msgOf(err))
		return nil, b.ds
	}
	b.in = in
	if b.p.Image != "" {
		if images := DeploymentImages(in); len(images) > 1 {
			b.ds.Errorf(b.file, "deployments", "run %d images (%s), and --image would replace them all with one; expected deployments that run one image, or no --image (set each image in the profile)", len(images), strings.Join(images, ", "))
			return nil, b.ds
		}
	}
	out, err := b.deploymentObjects()
	if err != nil {
		b.ds.Errorf(b.file, fieldOf(err), "%s", msgOf(err))
		return nil, b.ds
	}
	return out, b.ds
}

// DeploymentImages are the distinct images of the deployments' containers
// (the profile's image where a container has none), sorted.
func DeploymentImages(in *profile.Infra) []string {
	seen := map[string]bool{}
	for _, d := range in.Deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			img := c.Image
			if img == "" {
				img = in.Image
			}
			seen[img] = true
		}
	}
	return tree.SortedKeys(seen)
}

func (b *builder) deploymentObjects() ([]any, error) {
	var out []any
	for _, k := range tree.SortedKeys(b.in.Deployments) {
		d := b.in.Deployments[k]
		id := b.sharedIdentity(d.Name)
		dep := newDeployment(b.in, id, d)
		if b.p.OnlyDeployments && b.p.Image != "" {
			for i := range dep.Spec.Template.Spec.Containers {
				dep.Spec.Template.Spec.Containers[i].Image = b.p.Image
			}
		}
		if err := applyScheduler(b.in, "deployments."+k+".spec.template", &dep.Spec.Template); err != nil {
			return nil, err
		}
		out = append(out, dep)
		if svc := newService(b.in, id, d); svc != nil {
			out = append(out, svc)
		}
	}
	return out, nil
}

// managedBy is spec.managedBy of the object a queueing controller admits,
// as the scheduler integrations say (nil: KubeRay's own).
func managedBy(in *profile.Infra) *string {
	if by := registry.OwnerManagedBy(in.Scheduler.View()); by != "" {
		return &by
	}
	return nil
}

// dispatchable refuses a run its queueing integration cannot dispatch
// whole (fn/scheduler/kueue/dispatch.go: MultiKueue's).
func dispatchable(in *profile.Infra, mode runparams.Mode, objs []any) error {
	return schedulerError(registry.Dispatchable(in.Scheduler.View(), mode, objs))
}
