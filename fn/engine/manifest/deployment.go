package manifest

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// newDeployment renders a `deployments:` entry (§4.3): images only where a
// container has none, pull secrets and service account as for Ray pods.
func newDeployment(in *profile.Infra, id identity, d *profile.Deployment) *appsv1.Deployment {
	spec := d.Spec.DeepCopy()
	patchPodSpec(&spec.Template.Spec, in, in.Image, fillMissingImage)
	spec.Template.Labels = id.podLabels(in.Labels, d.Labels, spec.Template.Labels)
	if spec.Selector != nil {
		spec.Template.Labels = selectedWins(spec.Template.Labels, spec.Selector.MatchLabels)
	}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        d.Name,
			Namespace:   in.Namespace,
			Labels:      id.objectLabels(in.Labels, d.Labels, nil),
			Annotations: id.objectAnnotations(in.Annotations, d.Annotations),
		},
		Spec: *spec,
	}
}

// newService exposes a Deployment that has a selector and at least one
// container port (§4.4). Unnamed ports are numbered across all containers,
// not per container as nrl-k8s does (its two `port-0`s are rejected by the
// API server).
func newService(in *profile.Infra, id identity, d *profile.Deployment) *corev1.Service {
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 {
		return nil
	}
	var ports []corev1.ServicePort
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			name := p.Name
			if name == "" {
				name = fmt.Sprintf("port-%d", len(ports))
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			ports = append(ports, corev1.ServicePort{
				Name:       name,
				Port:       p.ContainerPort,
				TargetPort: intstr.FromInt32(p.ContainerPort),
				Protocol:   proto,
			})
		}
	}
	if len(ports) == 0 {
		return nil
	}
	selector := map[string]string{}
	for k, v := range d.Spec.Selector.MatchLabels {
		selector[k] = v
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: in.Namespace, Labels: id.bareLabels()},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports:    ports,
		},
	}
}
