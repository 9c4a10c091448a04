package build

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/profile"
)

// clusterRender is a rendered RayCluster spec and the DRA claims it uses.
type clusterRender struct {
	spec   *rayv1.RayClusterSpec
	claims []draClaim
}

// renderClusterSpec applies nrl-k8s's steps in order (§4.1): copy, segment
// split, pod patches, pod labels, DRA claim rewrite. The profile is not
// modified, so two renders are equal.
func renderClusterSpec(in *profile.Infra, role string, c *profile.Cluster) (*clusterRender, error) {
	spec := c.Spec.DeepCopy()
	// Profile keys first, on the groups as the profile wrote them, so that
	// an error names the profile's own field (segments are copies).
	base := "kuberay." + role + ".spec"
	if err := applyScheduler(in, base+".headGroupSpec.template", &spec.HeadGroupSpec.Template); err != nil {
		return nil, err
	}
	if err := applyVolumes(in, role, base+".headGroupSpec.template.spec", &spec.HeadGroupSpec.Template.Spec); err != nil {
		return nil, err
	}
	for i := range spec.WorkerGroupSpecs {
		f := fmt.Sprintf("%s.workerGroupSpecs[%d].template", base, i)
		t := &spec.WorkerGroupSpecs[i].Template
		if err := applyScheduler(in, f, t); err != nil {
			return nil, err
		}
		if err := applyPlacement(in, f+".spec", &t.Spec); err != nil {
			return nil, err
		}
		if err := applyVolumes(in, role, f+".spec", &t.Spec); err != nil {
			return nil, err
		}
	}
	if c.SegmentSize != nil {
		if *c.SegmentSize <= 0 || *c.SegmentSize > MaxNodes {
			return nil, fmt.Errorf("segmentSize=%d is outside 1..%d", *c.SegmentSize, MaxNodes)
		}
		groups, err := splitSegments(spec.WorkerGroupSpecs, int32(*c.SegmentSize))
		if err != nil {
			return nil, err
		}
		spec.WorkerGroupSpecs = groups
	}
	templates := []*corev1.PodTemplateSpec{&spec.HeadGroupSpec.Template}
	var workers []*corev1.PodSpec
	for i := range spec.WorkerGroupSpecs {
		t := &spec.WorkerGroupSpecs[i].Template
		templates = append(templates, t)
		workers = append(workers, &t.Spec)
	}
	for _, t := range templates {
		patchPodSpec(&t.Spec, in, overwriteImage)
		t.Labels = podLabels(in.Labels, c.Labels, t.Labels)
	}
	claims := rewriteClaims(workers, c.Name, role)
	return &clusterRender{spec: spec, claims: claims}, nil
}

// draObjects returns the ComputeDomain / RoCE template for each claim.
func draObjects(in *profile.Infra, c *profile.Cluster, claims []draClaim) []Object {
	count, class, nodes := in.EffectiveDRA(c)
	var out []Object
	for _, cl := range claims {
		switch cl.kind {
		case computeDomainKind:
			out = append(out, Object{Obj: newComputeDomain(cl.name, in.Namespace, nodes)})
		case roceKind:
			out = append(out, Object{Obj: newRoCETemplate(cl.name, in.Namespace, count, class)})
		}
	}
	return out
}

func newRayCluster(in *profile.Infra, c *profile.Cluster, spec *rayv1.RayClusterSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        c.Name,
			Namespace:   in.Namespace,
			Labels:      objectLabels(in.Labels, c.Labels, nil),
			Annotations: objectAnnotations(in.Annotations, c.Annotations),
		},
		Spec: *spec,
	}
}
