package runstatus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// The run's objects are the ones it owns: the run's label is on them AND
// KubeRay's owner references agree. A name is anyone's to write (a
// RayJob's status.rayClusterName, a Pod's ray.io/cluster label), and so is
// a label; only an owner reference's UID ties a RayCluster to the RayJob
// that created it, and a Pod or Service to its RayCluster. An object that
// fails the rule is named as not the run's and left out of the report.

// notOwned says why an object is not the run's ("" when it is): it must
// carry the run's label, and every owner reference of the ray.io kind
// owner must name one of uids.
func notOwned(u *unstructured.Unstructured, run, owner string, uids map[types.UID]bool) string {
	if v := u.GetLabels()[vocab.InstanceLabel]; v != run {
		return fmt.Sprintf("it does not carry %s=%s", vocab.InstanceLabel, run)
	}
	for _, uid := range rayOwners(u, owner) {
		if !uids[uid] {
			return fmt.Sprintf("its owner %s (uid %s) is not one of the run's", owner, uid)
		}
	}
	return ""
}

// rayOwners are the UIDs of an object's owner references of a ray.io kind.
func rayOwners(u *unstructured.Unstructured, kind string) []types.UID {
	var out []types.UID
	for _, r := range u.GetOwnerReferences() {
		if gv, err := schema.ParseGroupVersion(r.APIVersion); r.Kind == kind && (err != nil || gv.Group == rayv1.GroupVersion.Group) {
			out = append(out, r.UID)
		}
	}
	return out
}

// uidsOf are the objects' UIDs.
func uidsOf(items []unstructured.Unstructured) map[types.UID]bool {
	out := map[types.UID]bool{}
	for i := range items {
		if uid := items[i].GetUID(); uid != "" {
			out[uid] = true
		}
	}
	return out
}

// ownedClusters keeps the RayClusters the run owns: labelled with it and,
// when a RayJob created them, created by one of its RayJobs.
func ownedClusters(run string, jobs, clusters []unstructured.Unstructured) (kept []unstructured.Unstructured, ignored []Problem) {
	jobUIDs := uidsOf(jobs)
	for i := range clusters {
		if why := notOwned(&clusters[i], run, "RayJob", jobUIDs); why != "" {
			ignored = append(ignored, notTheRuns("RayCluster/"+clusters[i].GetName(), "RayCluster "+clusters[i].GetName()+" is not the run's: "+why+": ignored"))
			continue
		}
		kept = append(kept, clusters[i])
	}
	return kept, ignored
}

// jobOwns says whether the RayCluster named by a RayJob is that RayJob's:
// created by it (an owner reference with its UID), or, for a RayJob
// submitted to an existing cluster (clusterSelector), the run's own.
func jobOwns(j *rayv1.RayJob, cluster *unstructured.Unstructured, run string) bool {
	if len(j.Spec.ClusterSelector) > 0 {
		return notOwned(cluster, run, "RayJob", map[types.UID]bool{}) == ""
	}
	return j.UID != "" && notOwned(cluster, run, "RayJob", map[types.UID]bool{j.UID: true}) == "" && slices.Contains(rayOwners(cluster, "RayJob"), j.UID)
}

// ownedByClusters keeps the Pods or Services (kind) the run owns: those
// labelled with it and owned by none but the run's RayClusters, and those
// found by KubeRay's ray.io/cluster label (KubeRay's head Service does
// not carry the run's label) that one of the run's RayClusters owns, by
// UID, and that no other run's label claims. What is left out is one
// Problem line naming the first few.
func ownedByClusters(kind, run string, labelled, byCluster, clusters []unstructured.Unstructured) ([]unstructured.Unstructured, []Problem) {
	uids := uidsOf(clusters)
	var kept []unstructured.Unstructured
	seen := map[string]bool{}
	why := map[string]string{}
	for i := range labelled {
		seen[labelled[i].GetName()] = true
		if w := notOwned(&labelled[i], run, "RayCluster", uids); w != "" {
			why[labelled[i].GetName()] = w
			continue
		}
		kept = append(kept, labelled[i])
	}
	for i := range byCluster {
		u := &byCluster[i]
		if seen[u.GetName()] {
			continue
		}
		seen[u.GetName()] = true
		w := clusterOwned(u, run, uids)
		if w != "" {
			why[u.GetName()] = "labelled " + vocab.RayClusterLabel + "=" + u.GetLabels()[vocab.RayClusterLabel] + ", but " + w
			continue
		}
		kept = append(kept, *u)
	}
	if len(why) == 0 {
		return kept, nil
	}
	names := slices.Sorted(maps.Keys(why))
	shown := names[:min(len(names), maxNamed)]
	for i, n := range shown {
		shown[i] = n + " (" + why[n] + ")"
	}
	msg := fmt.Sprintf("%d %s(s) found as the run's are not its: %s", len(names), kind, strings.Join(shown, ", "))
	if len(names) > maxNamed {
		msg += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	return kept, []Problem{notTheRuns(kind+"s", msg+": ignored")}
}

// clusterOwned says why an object found by its ray.io/cluster label is
// not the run's ("" when it is): a RayCluster of the run must own it, and
// every RayCluster owning it must be the run's; a run label, if any, must
// be the run's.
func clusterOwned(u *unstructured.Unstructured, run string, uids map[types.UID]bool) string {
	if v, ok := u.GetLabels()[vocab.InstanceLabel]; ok && v != run {
		return fmt.Sprintf("it carries %s=%s", vocab.InstanceLabel, v)
	}
	owners := rayOwners(u, "RayCluster")
	if len(owners) == 0 {
		return "no RayCluster owns it"
	}
	for _, uid := range owners {
		if !uids[uid] {
			return fmt.Sprintf("its owner RayCluster (uid %s) is not one of the run's", uid)
		}
	}
	return ""
}

// maxNamed is how many objects one "not the run's" line names.
const maxNamed = 5

// NotOwned is the reason of a Problem naming an object that is not the
// run's (it is left out of the report).
const NotOwned = "NotOwned"

func notTheRuns(object, msg string) Problem {
	return Problem{Object: object, Reason: NotOwned, Message: msg}
}

// jobClusters reads the RayCluster each RayJob names (status.rayClusterName)
// that is not among the run's RayClusters already, and keeps it only if
// the RayJob owns it; it returns the RayClusters with the names of each
// RayJob's own cluster. A cluster named by a RayJob that does not own it
// is named as not the run's: another run's cluster and Pods never enter
// this run's report.
func (k *collector) jobClusters(run string, jobs, clusters []unstructured.Unstructured) ([]unstructured.Unstructured, map[string]bool, error) {
	byName := map[string]*unstructured.Unstructured{}
	for i := range clusters {
		byName[clusters[i].GetName()] = &clusters[i]
	}
	jobCluster := map[string]bool{}
	var added []unstructured.Unstructured
	for i := range jobs {
		var j rayv1.RayJob
		if err := kube.Decode(&jobs[i], &j); err != nil {
			return nil, nil, fmt.Errorf("RayJob %s: %w", jobs[i].GetName(), err)
		}
		name := j.Status.RayClusterName
		if name == "" {
			continue
		}
		u := byName[name]
		if u == nil {
			got, out, err := k.c.Get(k.ctx, kube.RayClusters, k.namespace, name)
			if kube.Stops(err) {
				return nil, nil, err
			}
			if out != kube.Found {
				continue
			}
			u = got
		}
		if !jobOwns(&j, u, run) {
			what := "ignored"
			if byName[name] != nil {
				what = "not counted as its cluster" // the run's all the same
			}
			k.r.Problems = append(k.r.Problems, notTheRuns("RayCluster/"+name, fmt.Sprintf("RayCluster %s named by RayJob %s is not owned by it: %s", name, j.Name, what)))
			continue
		}
		jobCluster[j.Name] = true
		if byName[name] == nil {
			byName[name] = u
			added = append(added, *u)
		}
	}
	return append(clusters, added...), jobCluster, nil
}

// ClusterPods are the Pods the run's RayClusters own (a RayJob's cluster
// included), sorted by name, for `logs`: read by the same rule as status
// reads them. notes name what was left out as not the run's. A read RBAC
// refused (403) is an error wrapping kube.ErrAccess naming the access.
func ClusterPods(ctx context.Context, c *kube.Conn, namespace, run string) (pods []unstructured.Unstructured, notes []string, err error) {
	r := Report{}
	k := &collector{ctx: ctx, c: c.Budgeted(kube.MaxReportBytes), namespace: namespace, r: &r}
	sel := vocab.InstanceLabel + "=" + run
	o, err := k.ownedRay(run, sel)
	if err == nil && len(k.refused) == 0 {
		o.pods, err = k.ownedBy(kube.Pods, "Pod", run, sel, o.clusters)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(k.refused) > 0 {
		return nil, nil, fmt.Errorf("%w: the cluster refused to list %s (403 Forbidden): logs needs list on rayjobs, rayclusters and pods in namespace %s",
			kube.ErrAccess, strings.Join(k.refused, ", "), namespace)
	}
	uids := uidsOf(o.clusters)
	for i := range o.pods {
		for _, uid := range rayOwners(&o.pods[i], "RayCluster") {
			if uids[uid] {
				pods = append(pods, o.pods[i])
				break
			}
		}
	}
	for _, p := range r.Problems {
		notes = append(notes, p.Message)
	}
	slices.SortFunc(pods, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return pods, notes, nil
}
