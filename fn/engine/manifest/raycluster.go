package manifest

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// clusterRender is a rendered RayCluster spec and the DRA claims it uses.
type clusterRender struct {
	spec   *rayv1.RayClusterSpec
	claims []draClaim
}

// renderClusterSpec applies nrl-k8s's steps in order (§4.1): copy, segment
// split, pod patches, pod labels, DRA claim rewrite. The profile is not
// modified, so two renders are equal.
func (b *builder) renderClusterSpec(id identity, role string, c *profile.Cluster) (*clusterRender, error) {
	in, spec := b.in, c.Spec.DeepCopy()
	// Profile keys first, on the groups as the profile wrote them, so that
	// an error names the profile's own field (segments are copies).
	base := "kuberay." + role + ".spec"
	if err := applyScheduler(in, base+".headGroupSpec.template", &spec.HeadGroupSpec.Template); err != nil {
		return nil, err
	}
	if err := applyVolumes(in, role, base+".headGroupSpec.template.spec", &spec.HeadGroupSpec.Template.Spec); err != nil {
		return nil, err
	}
	if err := applyRunPod(in, base+".headGroupSpec.template.spec", &spec.HeadGroupSpec.Template.Spec); err != nil {
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
		if err := applyRunPod(in, f+".spec", &t.Spec); err != nil {
			return nil, err
		}
	}
	if c.SegmentSize != nil {
		if *c.SegmentSize <= 0 || *c.SegmentSize > capacity.MaxNodes {
			return nil, fmt.Errorf("segmentSize=%d is outside 1..%d", *c.SegmentSize, capacity.MaxNodes)
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
		patchPodSpec(&t.Spec, b.in, b.image(), overwriteImage)
		t.Labels = id.podLabels(b.in.Labels, c.Labels, t.Labels)
		t.Annotations = id.podAnnotations(t.Annotations)
	}
	claims := rewriteClaims(workers, b.draBase(c), role)
	return &clusterRender{spec: spec, claims: claims}, nil
}

// draObjects returns the ComputeDomain / RoCE template for each claim.
func (b *builder) draObjects(id identity, c *profile.Cluster, claims []draClaim) []any {
	d := b.in.EffectiveDRA(c)
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: b.in.Namespace, Labels: id.bareLabels(), Annotations: id.objectAnnotations(nil, nil)}
	}
	var out []any
	for _, cl := range claims {
		switch cl.kind {
		case computeDomainKind:
			out = append(out, newComputeDomain(meta(cl.name), d.CDNodes))
		case roceKind:
			out = append(out, newNICTemplate(meta(cl.name), "roce", d.RoCE.Count, d.RoCE.Class))
		case infinibandKind:
			out = append(out, newNICTemplate(meta(cl.name), "infiniband", d.InfiniBand.Count, d.InfiniBand.Class))
		}
	}
	return out
}

func (b *builder) newRayCluster(id identity, role string, c *profile.Cluster, spec *rayv1.RayClusterSpec) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: vocab.RayAPIVersion, Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        b.clusterName(role, c),
			Namespace:   b.in.Namespace,
			Labels:      id.objectLabels(b.in.Labels, c.Labels, admissionLabels(b.in)),
			Annotations: id.objectAnnotations(b.in.Annotations, merged(c.Annotations, gangAnnotations(b.in))),
		},
		Spec: *spec,
	}
	rc.Spec.ManagedBy = managedBy(b.in)
	return rc
}
