// Package preflight checks, read-only, that a namespace holds what a
// rendered run needs before it is applied: the namespace and the Pod
// Security level it enforces, every ServiceAccount, PVC (Bound), Secret
// and ConfigMap the run references, the APIs it uses, the DeviceClasses its
// claims name, the KAI queue, and optionally nodes with enough GPUs. Which
// prerequisites a run has is fn/prereq's rule; this package only asks the
// cluster about each.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/kube"
)

// State is a prerequisite's verdict.
type State string

const (
	OK         State = "ok"
	Missing    State = "missing"
	CannotTell State = "cannot tell"
)

// Need is one prerequisite as fn/prereq lists it.
type Need struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Why        string `json:"why"`
}

// GPUGroup is a set of identical GPU pods the run will create, for the
// optional node check.
type GPUGroup struct {
	Owner        string            `json:"owner"`
	Group        string            `json:"group"`
	Pods         int64             `json:"pods"`
	GPUsPerPod   int64             `json:"gpusPerPod"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
}

// Input is what a run asks of the namespace.
type Input struct {
	Namespace string
	Needs     []Need
	// PodSecurity is the least privileged Pod Security level every pod of
	// the run fits ("privileged", "baseline" or "restricted"), and why.
	PodSecurity       string
	PodSecurityReason []string
	// GPUGroups are checked against the nodes when Nodes is set.
	GPUGroups []GPUGroup
	Nodes     bool
}

// Line is one prerequisite's verdict.
type Line struct {
	Need
	State  State  `json:"state"`
	Detail string `json:"detail,omitempty"`
}

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

// Run asks the cluster about every prerequisite. It returns an error
// wrapping kube.ErrUnreachable when the cluster cannot be asked at all.
func Run(ctx context.Context, c *kube.Conn, in Input) (Report, error) {
	r := Report{Namespace: in.Namespace}
	ns, nsOut, err := c.Get(ctx, kube.Namespaces, "", in.Namespace)
	if errors.Is(err, kube.ErrUnreachable) {
		return r, err
	}
	nsLine := Line{Need: Need{Kind: "Namespace", APIVersion: "v1", Name: in.Namespace, Why: "every object of the run is created there"}}
	nsLine.State, nsLine.Detail = verdict(nsOut, err, "")
	r.Lines = append(r.Lines, nsLine)
	if in.PodSecurity != "" {
		var labels map[string]string
		if ns != nil {
			labels = ns.GetLabels()
		}
		r.Lines = append(r.Lines, podSecurityLine(in, nsOut, labels))
	}
	served := map[string]map[string]bool{}
	servedOut := map[string]Outcome{}
	for _, n := range in.Needs {
		l, err := check(ctx, c, in.Namespace, nsOut, n, served, servedOut)
		if errors.Is(err, kube.ErrUnreachable) {
			return r, err
		}
		r.Lines = append(r.Lines, l)
	}
	if in.Nodes {
		lines, err := checkNodes(ctx, c, in.GPUGroups)
		if errors.Is(err, kube.ErrUnreachable) {
			return r, err
		}
		r.Lines = append(r.Lines, lines...)
	}
	return r, nil
}

// Outcome is re-exported so callers need not import kube for it.
type Outcome = kube.Outcome

func verdict(out kube.Outcome, err error, what string) (State, string) {
	switch out {
	case kube.Found:
		return OK, what
	case kube.Forbidden:
		return CannotTell, "no permission to read it: " + firstLine(err)
	}
	if err != nil {
		return CannotTell, firstLine(err)
	}
	return Missing, "not found"
}

// podSecurityLevels orders the levels from least to most restrictive.
var podSecurityLevels = map[string]int{"privileged": 0, "baseline": 1, "restricted": 2}

// podSecurityLine compares the level the namespace enforces
// (pod-security.kubernetes.io/enforce) with the level the run needs. A
// namespace without the label gets the cluster's default, which the API
// does not show: only a run that fits restricted is certain then.
func podSecurityLine(in Input, nsOut kube.Outcome, labels map[string]string) Line {
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
		have, known := podSecurityLevels[enforced]
		need := podSecurityLevels[in.PodSecurity]
		switch {
		case !known:
			l.State, l.Detail = CannotTell, fmt.Sprintf("unknown enforce level %q", enforced)
		case have > need:
			l.State, l.Detail = Missing, fmt.Sprintf("the namespace enforces %s; the run needs %s%s: KubeRay's pod creation will be refused", enforced, in.PodSecurity, why)
		default:
			l.State, l.Detail = OK, "the namespace enforces "+enforced
		}
	}
	return l
}

// apiResources maps the kinds a run uses to their resource names.
var apiResources = map[string]string{
	"RayJob": "rayjobs", "RayCluster": "rayclusters", "ComputeDomain": "computedomains",
	"ResourceClaimTemplate": "resourceclaimtemplates", "ResourceClaim": "resourceclaims",
	"DeviceClass": "deviceclasses", "Queue": "queues", "Deployment": "deployments",
	"Service": "services", "ConfigMap": "configmaps", "Pod": "pods",
}

func check(ctx context.Context, c *kube.Conn, ns string, nsOut kube.Outcome, n Need, served map[string]map[string]bool, servedOut map[string]Outcome) (Line, error) {
	l := Line{Need: n}
	gv, err := schema.ParseGroupVersion(n.APIVersion)
	if err != nil {
		l.State, l.Detail = CannotTell, fmt.Sprintf("apiVersion %q: %v", n.APIVersion, err)
		return l, nil
	}
	switch n.Kind {
	case "CustomResourceDefinition", "API":
		// n.Name is "<resource>.<group>/<version>"-style: the API the run uses.
		res, gvs, _ := strings.Cut(n.Name, " ")
		if gvs == "" {
			gvs = n.APIVersion
		}
		return servedLine(ctx, c, l, gvs, res, served, servedOut)
	case "Queue":
		// KAI's Queue is cluster scoped; only asked about when KAI serves it.
		l2, err := servedLine(ctx, c, Line{}, kube.KAIQueues.GroupVersion().String(), "queues", served, servedOut)
		if err != nil || l2.State != OK {
			l.State = l2.State
			l.Detail = "KAI scheduler's Queue API (scheduling.run.ai/v2) is not served: is KAI installed? " + l2.Detail
			if l2.State == Missing {
				l.Detail = "KAI scheduler's Queue API (scheduling.run.ai/v2) is not served: the pods name schedulerName kai-scheduler, and no scheduler will place them"
			}
			return l, err
		}
		_, out, err := c.Get(ctx, kube.KAIQueues, "", n.Name)
		l.State, l.Detail = verdict(out, err, "")
		return l, passUnreachable(err)
	case "DeviceClass":
		_, out, err := c.Get(ctx, kube.DeviceClasses, "", n.Name)
		l.State, l.Detail = verdict(out, err, "")
		if out == kube.NotFound && err == nil {
			l.Detail = "no DeviceClass " + n.Name + ": claims naming it are never allocated (is the DRA driver installed?)"
		}
		return l, passUnreachable(err)
	}
	if nsOut == kube.NotFound {
		l.State, l.Detail = Missing, "namespace "+ns+" does not exist"
		return l, nil
	}
	gvr := schema.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: strings.ToLower(n.Kind) + "s"}
	switch n.Kind {
	case "Secret":
		// Metadata only: a secret's values never reach this process.
		_, out, err := c.GetMetadata(ctx, kube.Secrets, ns, n.Name)
		l.State, l.Detail = verdict(out, err, "")
		return l, passUnreachable(err)
	case "PersistentVolumeClaim":
		u, out, err := c.Get(ctx, kube.PVCs, ns, n.Name)
		l.State, l.Detail = verdict(out, err, "")
		if out == kube.Found {
			var pvc corev1.PersistentVolumeClaim
			if derr := kube.Decode(u, &pvc); derr != nil {
				l.State, l.Detail = CannotTell, derr.Error()
			} else if pvc.Status.Phase != corev1.ClaimBound {
				l.State = Missing
				l.Detail = fmt.Sprintf("exists but is %s, not Bound: pods mounting it stay Pending until it binds", orNone(string(pvc.Status.Phase)))
			} else {
				l.Detail = "Bound to " + pvc.Spec.VolumeName
			}
		}
		return l, passUnreachable(err)
	case "ServiceAccount":
		gvr = kube.ServiceAccounts
	case "ConfigMap":
		gvr = kube.ConfigMaps
	}
	_, out, err := c.Get(ctx, gvr, ns, n.Name)
	l.State, l.Detail = verdict(out, err, "")
	return l, passUnreachable(err)
}

// servedLine asks whether a group version serves a resource, once per
// group version for the whole preflight.
func servedLine(ctx context.Context, c *kube.Conn, l Line, gv, resource string, served map[string]map[string]bool, servedOut map[string]Outcome) (Line, error) {
	res, seen := served[gv]
	out := servedOut[gv]
	if !seen {
		var err error
		res, out, err = c.Served(ctx, gv)
		if errors.Is(err, kube.ErrUnreachable) {
			return l, err
		}
		served[gv], servedOut[gv] = res, out
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
	case !res[resource]:
		l.State, l.Detail = Missing, gv+" is served but has no "+resource
	default:
		l.State, l.Detail = OK, gv+" serves "+resource
	}
	return l, nil
}

func passUnreachable(err error) error {
	if errors.Is(err, kube.ErrUnreachable) {
		return err
	}
	return nil
}

// checkNodes counts, per GPU group, the nodes matching its nodeSelector
// whose allocatable nvidia.com/gpu covers a pod. Node affinity and taints
// are not evaluated: the line says so.
func checkNodes(ctx context.Context, c *kube.Conn, groups []GPUGroup) ([]Line, error) {
	var lines []Line
	for _, g := range groups {
		sel := selector(g.NodeSelector)
		l := Line{Need: Need{Kind: "Nodes", APIVersion: "v1", Name: sel,
			Why: fmt.Sprintf("%s %s: %d pod(s) of %d GPU(s)", g.Owner, g.Group, g.Pods, g.GPUsPerPod)}}
		if l.Name == "" {
			l.Name = "(any node)"
		}
		items, out, err := c.List(ctx, kube.Nodes, "", sel)
		if errors.Is(err, kube.ErrUnreachable) {
			return nil, err
		}
		if out != kube.Found {
			l.State, l.Detail = verdict(out, err, "")
			lines = append(lines, l)
			continue
		}
		fit := int64(0)
		for i := range items {
			var n corev1.Node
			if kube.Decode(&items[i], &n) != nil || n.Spec.Unschedulable {
				continue
			}
			q := n.Status.Allocatable["nvidia.com/gpu"]
			if q.Value() >= g.GPUsPerPod {
				fit++
			}
		}
		detail := fmt.Sprintf("%d schedulable node(s) with at least %d allocatable nvidia.com/gpu; %d needed (node affinity, taints and GPUs already in use are not counted)", fit, g.GPUsPerPod, g.Pods)
		if fit >= g.Pods {
			l.State = OK
		} else {
			l.State = Missing
		}
		l.Detail = detail
		lines = append(lines, l)
	}
	return lines, nil
}

func selector(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

func orNone(s string) string {
	if s == "" {
		return "without a phase"
	}
	return s
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
