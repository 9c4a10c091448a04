package scheduler

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// ChannelClass is the DeviceClass NVIDIA's ComputeDomain channel claims
// ask devices from (the class fn/analyse/prereq lists).
const ChannelClass = "compute-domain-default-channel.nvidia.com"

// standIns runs, until ctx ends, what a cluster's controllers would do for
// the scheduler to see a run's Pods as they are in a cluster.
func standIns(ctx context.Context, env *operator.Env) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(standInPeriod):
		}
		_ = podClaims(ctx, env.Client)
		_ = channelTemplates(ctx, env.Client)
	}
}

// podClaims stands in for kube-controller-manager's resourceclaim
// controller (kubernetes pkg/controller/resourceclaim/controller.go,
// handleClaim): for each pod claim made from a ResourceClaimTemplate, a
// ResourceClaim with the template's spec, owned by the Pod and annotated
// with the pod claim's name, recorded in the Pod's
// status.resourceClaimStatuses, where the scheduler's DRA plugin looks.
func podClaims(ctx context.Context, c client.Client) error {
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		changed := false
		for _, pc := range p.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil || hasStatus(p, pc.Name) {
				continue
			}
			var tmpl resourcev1.ResourceClaimTemplate
			if err := c.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: *pc.ResourceClaimTemplateName}, &tmpl); err != nil {
				continue // the template is not there (yet): the Pod waits, as in a cluster
			}
			claim := &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{
					Namespace:    p.Namespace,
					GenerateName: fmt.Sprintf("%s-%s-", p.Name, pc.Name),
					Annotations:  map[string]string{"resource.kubernetes.io/pod-claim-name": pc.Name},
					Labels:       tmpl.Spec.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
						Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
				},
				Spec: tmpl.Spec.Spec,
			}
			if err := c.Create(ctx, claim); err != nil {
				return err
			}
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
				corev1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(claim.Name)})
			changed = true
		}
		if changed {
			if err := c.Status().Update(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasStatus(p *corev1.Pod, claim string) bool {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == claim {
			return true
		}
	}
	return false
}

// channelTemplates stands in for the ComputeDomain controller of NVIDIA's
// DRA driver (dra-driver-gpu, templates/compute-domain-channel-claim-
// template.tmpl.yaml): for each ComputeDomain, the ResourceClaimTemplate
// its spec.channel names, asking one channel device of ChannelClass (the
// driver's opaque channel config is left out: the scheduler does not read it).
func channelTemplates(ctx context.Context, c client.Client) error {
	var cds unstructured.UnstructuredList
	cds.SetAPIVersion(vocab.ComputeDomainAPIVersion)
	cds.SetKind("ComputeDomainList")
	if err := c.List(ctx, &cds); err != nil {
		return err
	}
	for _, cd := range cds.Items {
		name, _, _ := unstructured.NestedString(cd.Object, "spec", "channel", "resourceClaimTemplate", "name")
		if name == "" {
			continue
		}
		rct := &resourcev1.ResourceClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: cd.GetNamespace(), Name: name},
			Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
				Requests: []resourcev1.DeviceRequest{{Name: "channel", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: ChannelClass}}},
			}}},
		}
		if err := c.Create(ctx, rct); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
