package kueue

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Kueue's resources preflight reads (sigs.k8s.io/kueue v0.17.0 serves and
// stores v1beta2), the manager's MultiKueue objects among them.
var (
	LocalQueues             = resourceOf("localqueues")
	ClusterQueues           = resourceOf("clusterqueues")
	ResourceFlavors         = resourceOf("resourceflavors")
	WorkloadPriorityClasses = resourceOf("workloadpriorityclasses")
	AdmissionChecks         = resourceOf("admissionchecks")
	MultiKueueConfigs       = resourceOf("multikueueconfigs")
	MultiKueueClusters      = resourceOf("multikueueclusters")
)

func resourceOf(name string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: name}
}
