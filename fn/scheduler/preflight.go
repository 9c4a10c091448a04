package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

// What preflight (fn/afterapply/preflight) asks an integration: it owns
// the connection and hands each integration a Reader, so an integration
// reads the cluster without linking a client.

// Outcome classifies a read.
type Outcome int

const (
	Found     Outcome = iota
	NotFound          // the object (or the API serving it) does not exist
	Forbidden         // RBAC refused the read: "cannot tell", never "missing"
)

// Reader is preflight's connection to the cluster, as an integration reads
// it.
type Reader interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, Outcome, error)
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) ([]unstructured.Unstructured, Outcome, error)
	// Exists reads an object as metadata only: whether it exists, never
	// its data (a Secret's credentials never reach the process).
	Exists(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (Outcome, error)
	// BoundPods is what the cluster's Pods hold on its Nodes, from the
	// one walk of them preflight makes for every line.
	BoundPods(ctx context.Context) (BoundPods, Outcome, error)
	// Nodes are the cluster's Nodes as preflight read them, once for all
	// its lines (a Node it cannot read left out).
	Nodes(ctx context.Context) ([]*corev1.Node, Outcome, error)
	// Stops reports whether a read's error ends the whole preflight (the
	// cluster unreachable, failing, or refusing the credentials).
	Stops(err error) bool
}

// BoundPods is what the unfinished Pods bound to each of the Nodes (as
// Reader.Nodes lists them) request, summed per Holder, each Pod counting
// one of "pods": the input's own Pods (a run already applied) are left
// out, placed again. Read a page at a time, it holds no Pod (a cluster
// runs too many to hold at once).
type BoundPods struct {
	Held map[string]map[Holder]corev1.ResourceList
	// More says the cluster had more than Limit Pods: not all are counted.
	More  bool
	Limit int
}

// Holder is who holds a Node's resources: the scheduler that bound the
// Pods, and whether they are being deleted (they hold them until gone).
type Holder struct {
	Scheduler string
	Deleting  bool
}

// Add counts a bound Pod's requests (placement.PodRequests) on its Node.
func (b *BoundPods) Add(p *corev1.Pod) {
	if b.Held == nil {
		b.Held = map[string]map[Holder]corev1.ResourceList{}
	}
	on := b.Held[p.Spec.NodeName]
	if on == nil {
		on = map[Holder]corev1.ResourceList{}
		b.Held[p.Spec.NodeName] = on
	}
	h := Holder{Scheduler: p.Spec.SchedulerName, Deleting: p.DeletionTimestamp != nil}
	sum := on[h]
	if sum == nil {
		sum = corev1.ResourceList{}
		on[h] = sum
	}
	req := placement.PodRequests(p)
	req[corev1.ResourcePods] = placement.Quantity(1)
	for name, q := range req {
		have := sum[name]
		have.Add(q)
		sum[name] = have
	}
}

// Holders are a Node's holders in a fixed order (by scheduler, the
// deleting after), so sums over them are the same every run.
func (b BoundPods) Holders(node string) []Holder {
	hs := make([]Holder, 0, len(b.Held[node]))
	for h := range b.Held[node] {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Scheduler != hs[j].Scheduler {
			return hs[i].Scheduler < hs[j].Scheduler
		}
		return !hs[i].Deleting && hs[j].Deleting
	})
	return hs
}

// State is a prerequisite's verdict.
type State string

const (
	OK         State = "ok"
	Missing    State = "missing"
	CannotTell State = "cannot tell"
)

// Need is one prerequisite, as fn/analyse/prereq lists it.
type Need = prereq.Prerequisite

// Line is one prerequisite's verdict.
type Line struct {
	Need
	State  State  `json:"state"`
	Detail string `json:"detail,omitempty"`
	// Waits: the line is ok but the run waits there (a queue's free quota
	// does not hold it and nothing admits it now).
	Waits bool `json:"-"`
}

// PodSet is one kind of pod the input's objects make and how many, as
// KubeRay creates them (workload.Pod, the pod-group model check and
// placement share), with what a queueing integration's admission does to
// it.
type PodSet struct {
	workload.Pod
	// Kueue says what Kueue's admission changes in the pods (the flavors'
	// node labels), or why it refuses them (KueueRefuses).
	Kueue        string
	KueueRefuses bool
	// KueueUnread names the Kueue object that could not be read and why:
	// how Kueue changes the pod set is unknown, so is where it goes.
	KueueUnread string
}

// PreflightRun is what preflight asks of the cluster for the input's runs:
// their pod sets, and the queue and priority labels of their objects, each
// keyed "namespace/Kind/name".
type PreflightRun struct {
	// Namespace is the input's first namespace ("" for none): an object
	// of another is named namespace/name.
	Namespace  string
	Pods       []PodSet
	Queues     map[string]string
	Priorities map[string]string
}

// Verdict is a read's outcome as a line's state and detail.
func Verdict(out Outcome, err error) (State, string) {
	switch out {
	case Found:
		return OK, ""
	case Forbidden:
		return CannotTell, "no permission to read it: " + FirstLine(err)
	}
	if err != nil {
		return CannotTell, FirstLine(err)
	}
	return Missing, "not found"
}

// Failed reports whether a read failed (refused, or an answer that is no
// list) rather than found nothing: an API that is not served (404) has
// no objects, which is an answer.
func Failed(out Outcome, err error) bool {
	return out == Forbidden || err != nil
}

// ReadFailure names a failed read and why: access refused (the error
// says "access refused (403 Forbidden)"), or an error.
func ReadFailure(what string, out Outcome, err error) string {
	if out == Forbidden {
		return fmt.Sprintf("%s could not be read (%s)", what, FirstLine(err))
	}
	return fmt.Sprintf("%s could not be read (error: %s)", what, FirstLine(err))
}

// FirstLine is an error's first line ("" for none).
func FirstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Worse orders states: missing over cannot tell over ok.
func Worse(a, b State) bool {
	rank := map[State]int{OK: 0, CannotTell: 1, Missing: 2}
	return rank[a] > rank[b]
}

// Preflighter is the part of an integration preflight calls.
type Preflighter interface {
	// PreflightObject judges a found prerequisite object it owns (Kueue: a
	// LocalQueue against its ClusterQueue's quota; KAI: its Queue against
	// the cluster's room); ok false leaves l as read.
	PreflightObject(ctx context.Context, r Reader, run PreflightRun, l Line, u *unstructured.Unstructured) (out Line, ok bool, err error)
	// PreflightAdmit is the run's pod sets as it admits them (Kueue: the
	// flavors' node labels and tolerations merged into each): run.Pods
	// unchanged when it admits nothing.
	PreflightAdmit(ctx context.Context, r Reader, run PreflightRun) ([]PodSet, error)
}
