package kueue

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// PreflightAdmit is the input's pod groups as Kueue starts them: a run
// labelled with a LocalQueue has every pod set changed as Kueue changes it
// on admission (Admit: the nodeLabels and tolerations of
// the flavors assigned to it, the CPU head's included), the change said in
// the group's Kueue note. A queue, ClusterQueue or flavor that does not
// exist leaves the pods as rendered (the LocalQueue line says why); one
// whose read failed leaves how Kueue changes them unknown (KueueUnread).
func (Integration) PreflightAdmit(ctx context.Context, c scheduler.Reader, in scheduler.PreflightRun) ([]scheduler.PodSet, error) {
	out := make([]scheduler.PodSet, len(in.Pods))
	copy(out, in.Pods)
	queues := map[string]*queueFlavors{}
	for i, ps := range out {
		key := ps.Namespace + "/" + ps.Object
		lq := in.Queues[key]
		if lq == "" {
			continue
		}
		qf, seen := queues[ps.Namespace+"/"+lq]
		if !seen {
			var err error
			qf, err = readQueueFlavors(ctx, c, ps.Namespace, lq)
			if err != nil {
				return nil, err
			}
			queues[ps.Namespace+"/"+lq] = qf
		}
		if qf == nil {
			continue
		}
		if qf.unread != "" {
			out[i].KueueUnread = qf.unread
			continue
		}
		adm, err := Admit(&ps.Spec, placement.PodRequests(ps.AsPod()), qf.groups, qf.flavors)
		if err != nil {
			out[i].Kueue = fmt.Sprintf("Kueue cannot admit this pod set through ClusterQueue %s: %v", qf.clusterQueue, err)
			out[i].KueueRefuses = true
			continue
		}
		out[i].Spec = adm.Spec
		out[i].Kueue = admissionNote(&ps.Spec, adm, qf)
	}
	return out, nil
}

// admissionNote says what Kueue adds to the pod set: the labels of each
// flavor assigned that the pod did not select already.
func admissionNote(before *corev1.PodSpec, adm Admitted, qf *queueFlavors) string {
	var added []string
	for _, name := range adm.Flavors {
		var labels []string
		for _, k := range tree.SortedKeys(qf.flavors[name].NodeLabels) {
			if _, had := before.NodeSelector[k]; !had {
				labels = append(labels, k+"="+qf.flavors[name].NodeLabels[k])
			}
		}
		if len(labels) > 0 {
			added = append(added, fmt.Sprintf("ResourceFlavor %s's nodeLabels %s", name, strings.Join(labels, ", ")))
		}
	}
	if len(added) == 0 {
		return ""
	}
	return fmt.Sprintf("Kueue (ClusterQueue %s) adds %s to this pod set's nodeSelector, as it does for every pod set whose resources a flavor covers", qf.clusterQueue, strings.Join(added, " and "))
}

// queueFlavors is what a LocalQueue's ClusterQueue assigns from, or,
// unread, which read of it failed and why.
type queueFlavors struct {
	clusterQueue string
	groups       []ResourceGroup
	flavors      map[string]Flavor
	unread       string
}

// readQueueFlavors reads the LocalQueue, its ClusterQueue's resource
// groups and their ResourceFlavors; nil when one does not exist, unread
// set when one could not be read.
func readQueueFlavors(ctx context.Context, c scheduler.Reader, ns, name string) (*queueFlavors, error) {
	lq, out, err := c.Get(ctx, LocalQueues, ns, name)
	if c.Stops(err) {
		return nil, err
	}
	if scheduler.Failed(out, err) {
		return &queueFlavors{unread: scheduler.ReadFailure("Kueue's LocalQueue "+ns+"/"+name, out, err)}, nil
	}
	if out != scheduler.Found {
		return nil, nil
	}
	cqName, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
	if cqName == "" {
		return nil, nil
	}
	cq, out, err := c.Get(ctx, ClusterQueues, "", cqName)
	if c.Stops(err) {
		return nil, err
	}
	if scheduler.Failed(out, err) {
		return &queueFlavors{unread: scheduler.ReadFailure("Kueue's ClusterQueue "+cqName, out, err)}, nil
	}
	if out != scheduler.Found {
		return nil, nil
	}
	qf := &queueFlavors{clusterQueue: cqName, flavors: map[string]Flavor{}}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		var rg ResourceGroup
		covered, _, _ := unstructured.NestedStringSlice(gm, "coveredResources")
		for _, r := range covered {
			rg.Covered = append(rg.Covered, corev1.ResourceName(r))
		}
		flavors, _, _ := unstructured.NestedSlice(gm, "flavors")
		for _, f := range flavors {
			fm, _ := f.(map[string]any)
			if n, _ := fm["name"].(string); n != "" {
				rg.Flavors = append(rg.Flavors, n)
			}
		}
		qf.groups = append(qf.groups, rg)
	}
	for _, rg := range qf.groups {
		for _, name := range rg.Flavors {
			if _, done := qf.flavors[name]; done {
				continue
			}
			f, unread, err := readFlavor(ctx, c, name)
			if err != nil {
				return nil, err
			}
			if unread != "" {
				return &queueFlavors{unread: unread}, nil
			}
			if f == nil {
				return nil, nil // absent: Kueue admits nothing through it
			}
			qf.flavors[name] = *f
		}
	}
	return qf, nil
}

// readFlavor reads a ResourceFlavor's nodeLabels, nodeTaints and
// tolerations; nil when it does not exist, unread saying why when it
// could not be read.
func readFlavor(ctx context.Context, c scheduler.Reader, name string) (*Flavor, string, error) {
	u, out, err := c.Get(ctx, ResourceFlavors, "", name)
	if c.Stops(err) {
		return nil, "", err
	}
	if scheduler.Failed(out, err) {
		return nil, scheduler.ReadFailure("Kueue's ResourceFlavor "+name, out, err), nil
	}
	if out != scheduler.Found {
		return nil, "", nil
	}
	var rf struct {
		Spec struct {
			NodeLabels  map[string]string   `json:"nodeLabels"`
			NodeTaints  []corev1.Taint      `json:"nodeTaints"`
			Tolerations []corev1.Toleration `json:"tolerations"`
		} `json:"spec"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rf); err != nil {
		return nil, fmt.Sprintf("Kueue's ResourceFlavor %s could not be read (error: %s)", name, scheduler.FirstLine(err)), nil
	}
	return &Flavor{Name: name, NodeLabels: rf.Spec.NodeLabels, NodeTaints: rf.Spec.NodeTaints, Tolerations: rf.Spec.Tolerations}, "", nil
}
