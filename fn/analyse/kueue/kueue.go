// Package kueue holds what Kueue reads from and writes on a run's objects,
// in one place for every package that renders, checks, reviews or reads
// them back (sigs.k8s.io/kueue v0.17.0; its Go module is linked only by the
// Kueue tier's nested module hack/kueue, not by this one).
package kueue

// Labels (pkg/controller/constants/constants.go: QueueLabel,
// WorkloadPriorityClassLabel, JobUIDLabel).
const (
	// QueueLabel names the LocalQueue of the object Kueue admits.
	QueueLabel = "kueue.x-k8s.io/queue-name"
	// PriorityClassLabel names the WorkloadPriorityClass of its Workload.
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
	// JobUIDLabel is on a Workload: the UID of the job it stands for.
	JobUIDLabel = "kueue.x-k8s.io/job-uid"
)

// APIVersion is the version Kueue serves and stores its queues and
// Workloads in (apis/kueue/v1beta2).
const APIVersion = "kueue.x-k8s.io/v1beta2"
