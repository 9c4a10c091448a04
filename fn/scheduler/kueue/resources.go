package kueue

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Kueue's resources preflight reads (sigs.k8s.io/kueue v0.17.0 serves and
// stores v1beta2).
var (
	LocalQueues             = schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: "localqueues"}
	ClusterQueues           = schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: "clusterqueues"}
	ResourceFlavors         = schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: "resourceflavors"}
	WorkloadPriorityClasses = schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: "workloadpriorityclasses"}
)
