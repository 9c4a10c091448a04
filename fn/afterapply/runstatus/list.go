package runstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// RunLine is one run of a namespace as `status` without a run name lists
// it: its state judged from its RayJobs and RayClusters alone (stuck and
// queued need its Pods, Events and queues: `status RUN`).
type RunLine struct {
	Run     string  `json:"run"`
	Verdict Verdict `json:"verdict"`
	Summary string  `json:"summary"`
}

// Listing is a namespace's runs, sorted by name, and what was left out.
type Listing struct {
	Namespace string
	Runs      []RunLine
	// Notes say what the listing could not read or left out (more runs
	// than MaxListedRuns, a kind RBAC refused).
	Notes []string
}

// Bounds of a listing: objects read per kind, runs listed.
const (
	MaxListedObjects = 5000
	MaxListedRuns    = 1000
)

// helmManagedBy is the managed-by value Helm writes on every object it
// installs, so the chart's runs carry it instead of nrl-k8s's.
const helmManagedBy = "Helm"

// listSelector finds the project's run objects: a run label, nrl-k8s's or
// Helm's managed-by, and part-of nemo-rl (another Helm chart's RayClusters
// are not runs).
var listSelector = vocab.InstanceLabel + "," + vocab.ManagedByLabel + " in (" + vocab.ManagedByValue + "," + helmManagedBy + ")," +
	vocab.PartOfLabel + "=" + vocab.PartOfValue

// ListRuns lists the runs of a namespace: the distinct run labels of its
// RayJobs and RayClusters, and of the objects a stopped Kueue run leaves
// (ComputeDomains, ResourceClaimTemplates, ConfigMaps), each with its
// state. Bounded: MaxListedObjects per kind, MaxListedRuns runs.
func ListRuns(ctx context.Context, c *kube.Conn, namespace string, now time.Time) (Listing, error) {
	l := Listing{Namespace: namespace}
	c = c.Budgeted(kube.MaxReportBytes)
	byRun := map[string]*Report{}
	get := func(run string) *Report {
		if byRun[run] == nil {
			byRun[run] = &Report{Run: run, Namespace: namespace, podsUnread: true}
		}
		return byRun[run]
	}
	read := map[string][]unstructured.Unstructured{}
	refused := 0
	kinds := []struct {
		kind string
		gvr  schema.GroupVersionResource
	}{{"RayJob", kube.RayJobs}, {"RayCluster", kube.RayClusters}, {"ComputeDomain", kube.ComputeDomains}, {"ResourceClaimTemplate", kube.ClaimTemplates}, {"ConfigMap", kube.ConfigMaps}}
	for _, k := range kinds {
		items, more, out, err := c.ListSome(ctx, k.gvr, namespace, kube.ListOptions{LabelSelector: listSelector, Max: MaxListedObjects})
		switch {
		case kube.Stops(err):
			return l, err
		case out == kube.Forbidden:
			refused++
			l.Notes = append(l.Notes, fmt.Sprintf("cannot list %s (403 Forbidden): runs known by them may be missing", k.gvr.Resource))
		case more:
			l.Notes = append(l.Notes, fmt.Sprintf("more than %d %s carry run labels; the runs of the first %d are listed", MaxListedObjects, k.gvr.Resource, MaxListedObjects))
		}
		read[k.kind] = items
		for i := range items {
			if run := items[i].GetLabels()[vocab.InstanceLabel]; run != "" {
				get(run)
			}
		}
	}
	if refused == len(kinds) {
		return l, fmt.Errorf("%w: cannot list the runs of namespace %s: the cluster refused to list %s (403 Forbidden)", kube.ErrAccess, namespace, "rayjobs, rayclusters, computedomains, resourceclaimtemplates and configmaps")
	}
	runs := slices.Sorted(maps.Keys(byRun))
	if len(runs) > MaxListedRuns {
		l.Notes = append(l.Notes, fmt.Sprintf("more than %d runs in namespace %s; the first %d by name are listed", MaxListedRuns, namespace, MaxListedRuns))
		runs = runs[:MaxListedRuns]
	}
	for _, run := range runs {
		r := byRun[run]
		if err := judgeListed(r, read, now); err != nil {
			return l, err
		}
		l.Runs = append(l.Runs, RunLine{Run: run, Verdict: r.Verdict, Summary: r.Summary})
	}
	return l, nil
}

// judgeListed judges one run of a listing from its objects among those
// read: the RayClusters it owns (owned.go), its RayJobs, the others.
func judgeListed(r *Report, read map[string][]unstructured.Unstructured, now time.Time) error {
	of := func(kind string) []unstructured.Unstructured {
		var out []unstructured.Unstructured
		for _, it := range read[kind] {
			if it.GetLabels()[vocab.InstanceLabel] == r.Run {
				out = append(out, it)
			}
		}
		return out
	}
	jobs := of("RayJob")
	clusters, ignored := ownedClusters(r.Run, jobs, of("RayCluster"))
	r.Problems = ignored
	for i := range jobs {
		var j rayv1.RayJob
		if err := kube.Decode(&jobs[i], &j); err != nil {
			return fmt.Errorf("RayJob %s: %w", jobs[i].GetName(), err)
		}
		own := false
		for c := range clusters {
			own = own || clusters[c].GetName() == j.Status.RayClusterName && jobOwns(&j, &clusters[c], r.Run)
		}
		r.RayJobs = append(r.RayJobs, rayJob(&j, own, now))
	}
	for i := range clusters {
		var rc rayv1.RayCluster
		if err := kube.Decode(&clusters[i], &rc); err != nil {
			return fmt.Errorf("RayCluster %s: %w", clusters[i].GetName(), err)
		}
		r.RayClusters = append(r.RayClusters, rayCluster(&rc))
	}
	for _, kind := range []string{"ComputeDomain", "ResourceClaimTemplate", "ConfigMap"} {
		for _, it := range of(kind) {
			r.Others = append(r.Others, Object{Kind: kind, Name: it.GetName()})
		}
	}
	sortReport(r)
	r.Verdict, r.Summary = judge(*r)
	return nil
}

// Format is the listing as `status -n NS` prints it: one line per run, or
// a JSON array of RunLines (stable: sorted, no map). Notes are not in it.
func (l Listing) Format(format string) (string, error) {
	if format == "json" {
		runs := l.Runs
		if runs == nil {
			runs = []RunLine{}
		}
		b, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return "", err
		}
		return string(b) + "\n", nil
	}
	var b strings.Builder
	for _, r := range l.Runs {
		fmt.Fprintf(&b, "%s %s: %s\n", clean(r.Run), r.Verdict, clean(r.Summary))
	}
	return b.String(), nil
}
