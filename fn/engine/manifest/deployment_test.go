package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A deployment keeps its own images and selector labels; its Service
// numbers unnamed ports across containers and exists only with a selector
// and a port.
func TestDeploymentAndService(t *testing.T) {
	const base = "image: prof\nnamespace: team\ndeployments:\n  s:\n    name: sandbox\n    spec:\n"
	for _, tc := range []struct {
		name, profile string
		images        []string
		ports         []corev1.ServicePort // nil: no Service
	}{
		{"no selector, no Service", base + "      template: {spec: {containers: [{name: a, ports: [{containerPort: 80}]}]}}", []string{"prof"}, nil},
		{"no port, no Service", base + "      selector: {matchLabels: {app: s}}\n      template: {spec: {containers: [{name: a, image: own}]}}", []string{"own"}, nil},
		{"ports numbered across containers", base + "      selector: {matchLabels: {app: s}}\n      template: {spec: {containers: [{name: a, ports: [{containerPort: 80}]}, {name: b, image: own, ports: [{name: grpc, containerPort: 90, protocol: UDP}, {containerPort: 91}]}]}}",
			[]string{"prof", "own"}, []corev1.ServicePort{
				{Name: "port-0", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP},
				{Name: "grpc", Port: 90, TargetPort: intstr.FromInt32(90), Protocol: corev1.ProtocolUDP},
				{Name: "port-2", Port: 91, TargetPort: intstr.FromInt32(91), Protocol: corev1.ProtocolTCP}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infraOf(t, tc.profile)
			d := in.Deployments["s"]
			id := identity{instance: "sandbox"}
			dep := newDeployment(in, id, d)
			var images []string
			for _, c := range dep.Spec.Template.Spec.Containers {
				images = append(images, c.Image)
			}
			require.Equal(t, tc.images, images)
			require.Equal(t, "team", dep.Namespace)
			svc := newService(in, id, d)
			if tc.ports == nil {
				require.Nil(t, svc)
				return
			}
			require.Equal(t, tc.ports, svc.Spec.Ports)
			require.Equal(t, map[string]string{"app": "s"}, svc.Spec.Selector)
			require.Equal(t, "s", dep.Spec.Template.Labels["app"], "the selector's labels win on the pod")
		})
	}
}
