// Package preflight checks, read-only, that a namespace holds what a
// rendered run needs before it is applied: the namespace and the Pod
// Security level it enforces, every ServiceAccount, PVC (Bound), Secret
// and ConfigMap the run references, the APIs it uses, the DeviceClasses its
// claims name, the KAI queue, and optionally (--nodes) where the scheduler
// will put every pod, on the cluster as it is now (fn/analyse/placement:
// devices per node, what already runs, KAI's gangs, Kueue's flavors).
// Which prerequisites a run has is fn/analyse/prereq's rule; this package
// only asks the cluster about each, and hands a scheduler's own objects
// (Kueue's LocalQueue, its flavors) to its integration (integrations.go). A run MultiKueue dispatches is asked of
// its manager (the MultiKueue setup behind its queue) and of each worker
// given, as one cluster (multicluster.go).
package preflight

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
)

// State is a prerequisite's verdict.
type State = scheduler.State

const (
	OK         = scheduler.OK
	Missing    = scheduler.Missing
	CannotTell = scheduler.CannotTell
)

// Need is one prerequisite, as fn/analyse/prereq lists it.
type Need = scheduler.Need

// Input is what the runs ask of their namespaces.
type Input struct {
	// Namespace names the namespaces, as the report's last line does.
	Namespace string
	// Spaces are the namespaces, in input order, and the Pod Security
	// level the pods in each need.
	Spaces []Space
	Needs  []Need
	// APIVersions are every apiVersion the run uses (its objects' and its
	// prerequisites'): a CustomResourceDefinition prerequisite is checked
	// by asking whether each of these versions of its group is served.
	APIVersions []string
	// Pods are every pod the input's objects make, placed on the nodes
	// run after run when Nodes is set.
	Pods  []PodShape
	Nodes bool
	// Claims are the device requests checked, with Nodes, against the
	// ResourceSlices the cluster's DRA drivers publish.
	Claims []ClaimRequest
	// Gangs are the PodGroups KAI makes of the runs it places, keyed
	// "namespace/Kind/name" (placement.Gangs, what check reports).
	Gangs map[string]placement.Gang
	// Queues are the Kueue LocalQueues the runs are labelled with, keyed
	// "namespace/Kind/name".
	Queues map[string]string
	// Priorities are the WorkloadPriorityClasses of the same objects.
	Priorities map[string]string
}

// Space is one namespace of the input.
type Space struct {
	Namespace string
	// PodSecurity is the least privileged Pod Security level every pod in
	// the namespace fits ("privileged", "baseline" or "restricted"), and why.
	PodSecurity       string
	PodSecurityReason []string
}

// Line is one prerequisite's verdict.
type Line = scheduler.Line

// Report is every verdict, in the order of Input.Needs after the namespace
// and Pod Security lines.
type Report struct {
	Namespace string `json:"namespace"`
	Lines     []Line `json:"prerequisites"`
}

// Counts tallies the lines by state.
func (r Report) Counts() (ok, missing, cannotTell int) {
	for _, l := range r.Lines {
		switch l.State {
		case OK:
			ok++
		case Missing:
			missing++
		default:
			cannotTell++
		}
	}
	return ok, missing, cannotTell
}

// Failed reports whether the report fails the check: a prerequisite is
// missing, or with requireAll one cannot be told.
func (r Report) Failed(requireAll bool) bool {
	_, missing, cannot := r.Counts()
	return missing > 0 || requireAll && cannot > 0
}

// Run asks the cluster about every prerequisite. It returns an error
// wrapping kube.ErrUnreachable or kube.ErrServer when the cluster cannot be
// asked or fails, and kube.ErrAccess when it refuses the credentials (401
// on any read, whatever the API group: every line would be "cannot
// tell"). A 403 is judged per read: that line is "cannot tell".
func Run(ctx context.Context, c *kube.Conn, in Input) (Report, error) {
	c = c.Budgeted(kube.MaxReportBytes)
	r := Report{Namespace: in.Namespace}
	nsOut := map[string]kube.Outcome{}
	for _, sp := range in.Spaces {
		ns, out, err := c.Get(ctx, kube.Namespaces, "", sp.Namespace)
		if kube.Stops(err) {
			return r, err
		}
		nsOut[sp.Namespace] = out
		nsLine := Line{Need: Need{Kind: "Namespace", APIVersion: "v1", Name: sp.Namespace, Why: "every object of the run is created there"}}
		nsLine.State, nsLine.Detail = verdict(out, err)
		r.Lines = append(r.Lines, nsLine)
		if sp.PodSecurity != "" {
			var labels map[string]string
			if ns != nil {
				labels = ns.GetLabels()
			}
			r.Lines = append(r.Lines, podSecurityLine(sp, out, labels))
		}
	}
	k := &cache{served: map[string]map[string]bool{}, servedOut: map[string]Outcome{}, ours: oursOf(in), placing: in.Nodes}
	for _, n := range in.Needs {
		l, err := check(ctx, c, in, nsOut, n, k)
		if kube.Stops(err) {
			return r, err
		}
		r.Lines = append(r.Lines, l)
	}
	if in.Nodes {
		devices, err := deviceLines(ctx, c, in.Claims)
		if kube.Stops(err) {
			return r, err
		}
		r.Lines = append(r.Lines, devices...)
		lines, err := placementLines(ctx, c, in, k)
		if kube.Stops(err) {
			return r, err
		}
		r.Lines = append(r.Lines, lines...)
	}
	return r, nil
}

// cache holds what one preflight reads once for many lines: the
// discovery documents asked about, the Nodes and the Pods (the input's
// own, ours, told apart; the pods waiting for the scheduler kept when
// placing).
type cache struct {
	served    map[string]map[string]bool
	servedOut map[string]Outcome
	nodes     *nodeList
	pods      *podsRead
	ours      map[string]bool
	placing   bool
}

// nodeList is the cluster's Nodes as read once: those counted, and those
// left out (named) for a value no node has.
type nodeList struct {
	nodes []*corev1.Node
	bad   []string
	out   kube.Outcome
	err   error
}

// nodesOf lists the Nodes on first use.
func (k *cache) nodesOf(ctx context.Context, c *kube.Conn) *nodeList {
	if k.nodes == nil {
		l := &nodeList{}
		more, out, err := kube.EachAs(ctx, c, kube.Nodes, "", kube.MaxListItems, nodeListBytes, func(ln *leanNode, err error) {
			n, bad := readNode(ln, err)
			if n != nil {
				l.nodes = append(l.nodes, n)
			} else {
				l.bad = append(l.bad, bad)
			}
		})
		if more {
			out, err = kube.NotFound, fmt.Errorf("%w: listing nodes: more than %d objects; expected a cluster's nodes to be fewer", kube.ErrServer, kube.MaxListItems)
		}
		l.out, l.err = out, err
		if out != kube.Found {
			l.nodes, l.bad = nil, nil
		}
		k.nodes = l
	}
	return k.nodes
}

// nodeListBytes bounds the answers of the Nodes list, read a page at a
// time beside the report's budget: the Nodes of a cluster of over a
// thousand nodes (about 50 kB each, image lists and all, which are
// skipped as each node is read). Two pages of the largest answer fit in
// it, as in the report's budget: what decoding a page holds, several
// times its size, stays as it was.
const nodeListBytes = 64 << 20

// Outcome is re-exported so callers need not import kube for it.
type Outcome = kube.Outcome

func verdict(out kube.Outcome, err error) (State, string) {
	return scheduler.Verdict(outcome(out), err)
}

// podSecurityLine compares the level the namespace enforces
// (pod-security.kubernetes.io/enforce) with the level the run needs. A
// namespace without the label gets the cluster's default, which the API
// does not show: only a run that fits restricted is certain then.
func podSecurityLine(in Space, nsOut kube.Outcome, labels map[string]string) Line {
	l := Line{Need: Need{Kind: "PodSecurity", APIVersion: "v1", Name: in.Namespace,
		Why: fmt.Sprintf("the run's pods need Pod Security level %q", in.PodSecurity)}}
	why := ""
	if len(in.PodSecurityReason) > 0 {
		why = " (" + strings.Join(in.PodSecurityReason, "; ") + ")"
	}
	if nsOut != kube.Found {
		if in.PodSecurity == "restricted" {
			l.State, l.Detail = OK, "restricted fits any enforced level"
			return l
		}
		l.State, l.Detail = CannotTell, "the namespace could not be read"
		return l
	}
	enforced, ok := labels["pod-security.kubernetes.io/enforce"]
	switch {
	case !ok && in.PodSecurity == "restricted":
		l.State, l.Detail = OK, "no enforce label; restricted fits any cluster default"
	case !ok:
		l.State, l.Detail = CannotTell, "the namespace has no pod-security.kubernetes.io/enforce label, so the cluster's default level applies (the API does not show it); the run needs "+in.PodSecurity+why
	default:
		have := podsecurity.Level(enforced)
		switch {
		case !slices.Contains(podsecurity.Levels, have):
			l.State, l.Detail = CannotTell, fmt.Sprintf("unknown enforce level %q", enforced)
		case !have.Allows(podsecurity.Level(in.PodSecurity)):
			l.State, l.Detail = Missing, fmt.Sprintf("the namespace enforces %s; the run needs %s%s: KubeRay's pod creation will be refused", enforced, in.PodSecurity, why)
		default:
			l.State, l.Detail = OK, "the namespace enforces "+enforced
		}
	}
	return l
}

// clusterScoped are the prerequisite kinds that live outside namespaces.
var clusterScoped = map[string]bool{"DeviceClass": true, "Queue": true, "PriorityClass": true, "RuntimeClass": true, "WorkloadPriorityClass": true,
	"CustomResourceDefinition": true, "APIService": true}

// resources are the resource names of the kinds fn/analyse/prereq lists whose name
// is not the lowercase kind plus "s".
var resources = map[string]string{"PriorityClass": "priorityclasses", "DeviceClass": "deviceclasses", "WorkloadPriorityClass": "workloadpriorityclasses"}

// check asks the cluster about one prerequisite.
func check(ctx context.Context, c *kube.Conn, in Input, nsOut map[string]kube.Outcome, n Need, k *cache) (Line, error) {
	l := Line{Need: n}
	switch n.Kind {
	case prereq.ExtendedResourceKind:
		return extendedResourceLine(ctx, c, l, k)
	case "CustomResourceDefinition":
		return crdLine(ctx, c, in, l, k)
	case "APIService":
		// n.Name is <version>.<group>, as the API server names it.
		version, group, _ := strings.Cut(n.Name, ".")
		one, err := servedLine(ctx, c, group+"/"+version, "", k)
		l.State, l.Detail = one.State, one.Detail
		return l, err
	case "Queue", "LocalQueue", "WorkloadPriorityClass":
		// Only asked about when KAI (Queue) or Kueue serves the API.
		if line, done, err := schedulerAPILine(ctx, c, l, k); done || err != nil {
			return line, err
		}
	}
	return objectLine(ctx, c, in, nsOut, l, k)
}

// crdLine checks a CustomResourceDefinition prerequisite: n.Name is
// <plural>.<group>, and the versions asked about are the ones the run uses.
func crdLine(ctx context.Context, c *kube.Conn, in Input, l Line, k *cache) (Line, error) {
	plural, group, _ := strings.Cut(l.Name, ".")
	var lines []string
	l.State = OK
	for _, gv := range versionsOf(group, in.APIVersions) {
		one, err := servedLine(ctx, c, gv, plural, k)
		if err != nil {
			return l, err
		}
		lines = append(lines, one.Detail)
		if worse(one.State, l.State) {
			l.State = one.State
		}
	}
	l.Detail = strings.Join(lines, "; ")
	if len(lines) == 0 {
		l.State, l.Detail = CannotTell, "no version of "+group+" is used by the run"
	}
	return l, nil
}

// schedulerAPILine asks whether KAI's Queue API or Kueue's API serves the
// prerequisite's resource: done when it does not (the line says so).
func schedulerAPILine(ctx context.Context, c *kube.Conn, l Line, k *cache) (Line, bool, error) {
	gv, plural := vocab.KueueAPIVersion, resourceOf(l.Kind)
	why := "Kueue's API (" + gv + ") is not served: is Kueue installed? Without it nothing unsuspends the run, and with the label and no Kueue the RayJob runs at once, unqueued"
	if l.Kind == "Queue" {
		gv = vocab.KAIQueueAPIVersion
		why = "KAI scheduler's Queue API (" + vocab.KAIQueueAPIVersion + ") is not served: is KAI installed? (the pods name schedulerName " + vocab.KAISchedulerName + ", and no other scheduler places them)"
	}
	one, err := servedLine(ctx, c, gv, plural, k)
	if err != nil || one.State == OK {
		return l, false, err
	}
	if one.State != Missing {
		// A refusal (403) is not absence: say what the server said.
		why = one.Detail
	}
	l.State, l.Detail = one.State, why
	return l, true, nil
}

// resourceOf is the resource name of a prerequisite's kind.
func resourceOf(kind string) string {
	if r := resources[kind]; r != "" {
		return r
	}
	return strings.ToLower(kind) + "s"
}

// objectLine reads the prerequisite's object: it exists, and a PVC is
// Bound, a LocalQueue's ClusterQueue admits the run.
func objectLine(ctx context.Context, c *kube.Conn, in Input, nsOut map[string]kube.Outcome, l Line, k *cache) (Line, error) {
	gv, err := schema.ParseGroupVersion(l.APIVersion)
	if err != nil {
		l.State, l.Detail = CannotTell, fmt.Sprintf("apiVersion %q: %v", l.APIVersion, err)
		return l, nil
	}
	ns := l.Namespace
	if clusterScoped[l.Kind] {
		ns = ""
	} else if nsOut[orFirst(ns, in.Spaces)] == kube.NotFound {
		l.State, l.Detail = Missing, "namespace "+l.Namespace+" does not exist"
		return optional(l), nil
	}
	if l.Kind == "Secret" {
		// Metadata only: a secret's values never reach this process.
		_, out, err := c.GetMetadata(ctx, kube.Secrets, ns, l.Name)
		l.State, l.Detail = verdict(out, err)
		return optional(l), passUnreachable(err)
	}
	u, out, err := c.Get(ctx, gv.WithResource(resourceOf(l.Kind)), ns, l.Name)
	l.State, l.Detail = verdict(out, err)
	if out == kube.Found {
		// A scheduler's own object (Kueue's LocalQueue, KAI's Queue) is its integration's to judge.
		if judged, ok, err := registry.PreflightObject(ctx, reader{c, k}, in.run(), l, u); ok || err != nil {
			return judged, err
		}
	}
	switch {
	case out != kube.Found:
		if l.Kind == "DeviceClass" && l.State == Missing {
			l.Detail = "not found: claims naming it are never allocated (is the DRA driver installed?)"
		}
	case l.Kind == "PersistentVolumeClaim":
		l = pvcLine(l, u)
	}
	return optional(l), passUnreachable(err)
}

// pvcLine: a PersistentVolumeClaim is ok only when Bound.
func pvcLine(l Line, u *unstructured.Unstructured) Line {
	var pvc corev1.PersistentVolumeClaim
	if err := kube.Decode(u, &pvc); err != nil {
		l.State, l.Detail = CannotTell, err.Error()
	} else if pvc.Status.Phase != corev1.ClaimBound {
		l.State = Missing
		l.Detail = fmt.Sprintf("exists but is %s, not Bound: pods mounting it stay Pending until it binds", orNone(string(pvc.Status.Phase)))
	} else {
		l.Detail = "Bound to " + pvc.Spec.VolumeName
	}
	return l
}

// optional: an absent optional Secret or ConfigMap is fine (the pod
// starts without it), and the line says so.
func optional(l Line) Line {
	if l.Optional && l.State == Missing {
		l.State, l.Detail = OK, "absent, and every reference is optional"
	}
	return l
}

func worse(a, b State) bool { return scheduler.Worse(a, b) }

// versionsOf lists the run's apiVersions in group, sorted and unique.
func versionsOf(group string, apiVersions []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, av := range apiVersions {
		if g, _, ok := strings.Cut(av, "/"); ok && g == group && !seen[av] {
			seen[av] = true
			out = append(out, av)
		}
	}
	sort.Strings(out)
	return out
}

// servedLine asks whether a group version serves a resource, once per
// group version for the whole preflight.
func servedLine(ctx context.Context, c *kube.Conn, gv, resource string, k *cache) (Line, error) {
	var l Line
	res, seen := k.served[gv]
	out := k.servedOut[gv]
	if !seen {
		var err error
		res, out, err = c.Served(ctx, gv)
		if kube.Stops(err) {
			return l, err
		}
		k.served[gv], k.servedOut[gv] = res, out
		if out == kube.Forbidden {
			l.State, l.Detail = CannotTell, "no permission to read the API's discovery document: "+firstLine(err)
			return l, nil
		}
	}
	switch {
	case out == kube.Forbidden:
		l.State, l.Detail = CannotTell, "no permission to read the API's discovery document"
	case out == kube.NotFound:
		l.State, l.Detail = Missing, gv+" is not served (its CRD or API is not installed)"
	case resource != "" && !res[resource]:
		l.State, l.Detail = Missing, gv+" is served but has no "+resource
	case resource == "":
		l.State, l.Detail = OK, gv+" is served"
	default:
		l.State, l.Detail = OK, gv+" serves "+resource
	}
	return l, nil
}

// orFirst is ns, or the input's first namespace for an object without one.
func orFirst(ns string, spaces []Space) string {
	if ns == "" && len(spaces) > 0 {
		return spaces[0].Namespace
	}
	return ns
}

func passUnreachable(err error) error {
	if kube.Stops(err) {
		return err
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "without a phase"
	}
	return s
}

func firstLine(err error) string { return scheduler.FirstLine(err) }
