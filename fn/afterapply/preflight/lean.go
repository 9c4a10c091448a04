package preflight

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cluster-wide lists preflight reads every run (every Node, every
// ResourceSlice of a thousand-node fleet) are decoded into these, the
// fields placement and the lines read with their JSON names (as in
// k8s.io/api), the rest of each object (images, managed fields, node
// info, each device's attributes) skipped, never built.

// leanNode is what is read of a Node: its name and labels (node
// affinity, topology), taints and cordon, allocatable and conditions
// (KAI counts Ready nodes).
type leanNode struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool           `json:"unschedulable"`
		Taints        []corev1.Taint `json:"taints"`
	} `json:"spec"`
	Status struct {
		Allocatable corev1.ResourceList `json:"allocatable"`
		Conditions  []struct {
			Type   corev1.NodeConditionType `json:"type"`
			Status corev1.ConditionStatus   `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// node is the Node as read, its other fields zero.
func (l *leanNode) node() *corev1.Node {
	n := &corev1.Node{TypeMeta: l.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: l.Metadata.Name, Labels: l.Metadata.Labels},
		Spec: corev1.NodeSpec{Unschedulable: l.Spec.Unschedulable, Taints: l.Spec.Taints}, Status: corev1.NodeStatus{Allocatable: l.Status.Allocatable}}
	for _, c := range l.Status.Conditions {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: c.Type, Status: c.Status})
	}
	return n
}

// leanSlice is what is read of a ResourceSlice: its driver, node and pool,
// and how many devices it publishes.
type leanSlice struct {
	metav1.TypeMeta `json:",inline"`
	Spec            struct {
		Driver   string  `json:"driver"`
		NodeName *string `json:"nodeName"`
		Pool     struct {
			Name string `json:"name"`
		} `json:"pool"`
		Devices []struct{} `json:"devices"`
	} `json:"spec"`
}
