package manifest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// draKind says which object a known claim needs.
type draKind int

const (
	computeDomainKind draKind = iota
	roceKind
	infinibandKind
)

// DRA object names: `<prefix><base>-<role>`, base the cluster's name or,
// for a named run, the run's (run.go). A cluster name that ends in its role
// already (the ultra profiles' `<user>-ultra-pipeclean-training`) is not
// given it twice: nrl-k8s names that ComputeDomain
// `compute-domain-<user>-ultra-pipeclean-training-training`, which reads as
// a typo and says nothing more (docs/deviations.md).
func computeDomainName(cluster, role string) string {
	return "compute-domain-" + draBase(cluster, role)
}
func roceName(cluster, role string) string       { return "roce-" + draBase(cluster, role) }
func infinibandName(cluster, role string) string { return "infiniband-" + draBase(cluster, role) }

func draBase(cluster, role string) string {
	if strings.HasSuffix(cluster, "-"+role) {
		return cluster
	}
	return cluster + "-" + role
}

// draClaim is one distinct claim found in a cluster's worker pods.
type draClaim struct {
	kind draKind
	name string
}

// rewriteClaims points the known claims of worker pods at the per-cluster
// templates and returns them in first-seen order. Head pods are left alone.
func rewriteClaims(pods []*corev1.PodSpec, cluster, role string) []draClaim {
	var found []draClaim
	seen := map[draKind]bool{}
	for _, spec := range pods {
		for i := range spec.ResourceClaims {
			rc := &spec.ResourceClaims[i]
			var k draKind
			var name string
			switch rc.Name {
			case vocab.ComputeDomainClaim:
				k, name = computeDomainKind, computeDomainName(cluster, role)
			case vocab.RoCEClaim:
				k, name = roceKind, roceName(cluster, role)
			case vocab.InfiniBandClaim:
				k, name = infinibandKind, infinibandName(cluster, role)
			default:
				continue
			}
			rc.ResourceClaimTemplateName = ptr(name)
			rc.ResourceClaimName = nil
			if !seen[k] {
				seen[k] = true
				found = append(found, draClaim{kind: k, name: name})
			}
		}
	}
	return found
}

// ComputeDomain is NVIDIA's resource.nvidia.com/v1beta1 ComputeDomain. Its Go
// module is not available here, so the fields we set are declared locally and
// checked against the CRD schema (fn/analyse/schema/crds) in tests.
type ComputeDomain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ComputeDomainSpec `json:"spec"`
}

// ComputeDomainSpec is the part of the CRD spec we render.
type ComputeDomainSpec struct {
	Channel  ComputeDomainChannel `json:"channel"`
	NumNodes int64                `json:"numNodes"`
}

// ComputeDomainChannel names the ResourceClaimTemplate the driver creates.
type ComputeDomainChannel struct {
	ResourceClaimTemplate ComputeDomainTemplateRef `json:"resourceClaimTemplate"`
}

// ComputeDomainTemplateRef is the template's name.
type ComputeDomainTemplateRef struct {
	Name string `json:"name"`
}

func newComputeDomain(meta metav1.ObjectMeta, numNodes int64) *ComputeDomain {
	return &ComputeDomain{
		TypeMeta:   metav1.TypeMeta{APIVersion: vocab.ComputeDomainAPIVersion, Kind: "ComputeDomain"},
		ObjectMeta: meta,
		Spec: ComputeDomainSpec{
			Channel:  ComputeDomainChannel{ResourceClaimTemplate: ComputeDomainTemplateRef{Name: meta.Name}},
			NumNodes: numNodes,
		},
	}
}

// newNICTemplate requests count NICs of the given device class; request is
// the request's name (roce, infiniband: what the devices are).
func newNICTemplate(meta metav1.ObjectMeta, request string, count int64, class string) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: vocab.DRAAPIVersion, Kind: "ResourceClaimTemplate"},
		ObjectMeta: meta,
		Spec: resourcev1.ResourceClaimTemplateSpec{
			Spec: resourcev1.ResourceClaimSpec{
				Devices: resourcev1.DeviceClaim{
					Requests: []resourcev1.DeviceRequest{{
						Name: request,
						Exactly: &resourcev1.ExactDeviceRequest{
							DeviceClassName: class,
							Count:           count,
						},
					}},
				},
			},
		},
	}
}
