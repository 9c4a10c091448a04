package preflight

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// PodShape is one kind of pod the input's objects make and how many, with
// what a queueing integration's admission does to it.
type PodShape = scheduler.PodSet

// PodShapes lists every pod the objects of the input make, every run of it
// together, in object order, with the Ray clusters they ask for (read
// once, for their gangs).
func PodShapes(docs []rendered.Doc) ([]PodShape, []workload.Cluster, error) {
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
	}
	read, err := workload.Objects(objs)
	if err != nil {
		return nil, nil, err
	}
	pods, errs := workload.Pods(read)
	if len(errs) > 0 {
		return nil, nil, errs[0]
	}
	clusters, errs := workload.Clusters(read)
	if len(errs) > 0 {
		return nil, nil, errs[0]
	}
	var out []PodShape
	for _, p := range pods {
		if p.Count > 0 {
			out = append(out, PodShape{Pod: p})
		}
	}
	return out, clusters, nil
}

func reasons(why map[string]int) string {
	if len(why) == 0 {
		return "the cluster has no nodes"
	}
	keys := make([]string, 0, len(why))
	for k := range why {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, why[k])
	}
	return strings.Join(parts, ", ")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName { return placement.SortedNames(l) }
