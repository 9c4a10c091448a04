// Package review turns two renders of a runs repository into the short
// summary a reviewer reads before approving a pull request: per run, the
// GPU nodes and GPUs requested, images, objects added, removed or changed,
// DRA claims, KAI scheduling fields and the entrypoints as a line diff.
//
// Parse extracts those facts from one run's rendered YAML stream, Diff
// compares two sets of runs, Text and Markdown print the result. Nothing
// here reads files: the CLI hands over bytes.
package review

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Render is a set of runs by name: a whole output tree, or one file.
type Render map[string]*RunFacts

// RunFacts is what one run's render asks of the cluster.
type RunFacts struct {
	Name string
	File string
	// Objects maps "Kind/name" to the object in a canonical form (JSON with
	// sorted keys): equal forms mean an unchanged object, whatever the
	// file's formatting or comments.
	Objects map[string]string
	// Pods are the pod groups that request GPUs (Ray worker groups, a head
	// that asks for GPUs, Deployments).
	Pods []PodGroup
	// Images are every container and init container image, sorted, unique.
	Images []string
	// Scheduling and DRA map a fact key ("RayCluster/x workers queue") to
	// its value; see facts.go for how keys are formed.
	Scheduling map[string]string
	DRA        map[string]string
	// Entrypoints maps "RayJob/name" to the job's entrypoint.
	Entrypoints map[string]string
	// Security maps a security or scope fact key ("RayCluster/ns/x workers
	// hostNetwork", "Service/ns/x type") to its value (security.go).
	Security map[string]string
	// PodSecurity is the Pod Security level every pod of the run fits
	// (fn/analyse/podsecurity, pods as KubeRay creates them); "" without pods.
	PodSecurity string
	// Namespaces are the namespaces of the run's objects, sorted.
	Namespaces []string
	// Privileges are what the run's pods may do beyond Pod Security's
	// baseline and what it exposes beyond the cluster, sorted
	// (privileges.go).
	Privileges []string
	// Warnings are the render's warnings (file paths relative to the runs
	// repository), when the run was rendered rather than read from a file:
	// idle nodes and the like change nothing in the objects.
	Warnings []string
}

// PodGroup is a set of identical pods.
type PodGroup struct {
	// Owner is "Kind/name"; Group the worker group ("head" for the head).
	Owner string
	Group string
	// Pods is what KubeRay starts (fn/analyse/capacity: replicas clamped to
	// [minReplicas, maxReplicas] × numOfHosts, 0 for a suspended group);
	// MaxPods what the in-tree autoscaler may grow it to (Pods without
	// autoscaling; capacity.MaxNodes+1 is "no ceiling").
	Pods    int64
	MaxPods int64
	// GPUsPerPod is the pod's nvidia.com/gpu: per container its limit, else
	// its request, summed over containers.
	GPUsPerPod int64
}

// Totals is what a run, or a whole render, requests.
type Totals struct {
	// Nodes counts pods that request GPUs. A GB300 Ray worker takes a whole
	// node (4 GPUs), so that is the number of nodes the run occupies; pods
	// without GPUs (a CPU head, a sandbox) land on shared CPU nodes and are
	// not what a run costs.
	Nodes int64
	GPUs  int64
}

// Ceiling sums the run's GPU pods with every autoscaling group at its
// ceiling (PodGroup.MaxPods): equal to Totals when nothing autoscales.
func (r *RunFacts) Ceiling() Totals {
	var t Totals
	if r == nil {
		return t
	}
	for _, p := range r.Pods {
		if p.GPUsPerPod > 0 {
			t.Nodes += p.MaxPods
			t.GPUs += p.MaxPods * p.GPUsPerPod
		}
	}
	return t
}

// Totals sums the run's GPU pods.
func (r *RunFacts) Totals() Totals {
	var t Totals
	if r == nil {
		return t
	}
	for _, p := range r.Pods {
		if p.GPUsPerPod <= 0 {
			continue
		}
		t.Nodes += p.Pods
		t.GPUs += p.Pods * p.GPUsPerPod
	}
	return t
}

// Totals sums every run.
func (r Render) Totals() Totals {
	var t Totals
	for _, run := range r {
		rt := run.Totals()
		t.Nodes += rt.Nodes
		t.GPUs += rt.GPUs
	}
	return t
}

// podTemplate is one pod template of an owner, with where it sits.
type podTemplate struct {
	// scope is "head", "worker" or "pods" (a Deployment's single template).
	scope   string
	group   string
	pods    int64
	maxPods int64
	tmpl    *corev1.PodTemplateSpec
}

// owner is an object that has pod templates.
type owner struct {
	ref         string
	labels      map[string]string
	annotations map[string]string
	templates   []podTemplate
	// privileges beyond the pod templates': the head Service KubeRay
	// creates from the spec (privileges.go).
	privileges []string
	// admission says when the owner's pods are created, if not at once:
	// queued in Kueue, or suspended until someone resumes it.
	admission string
}

// Parse reads one run's render: a multi-document YAML stream. Every error
// names file and, where there is one, the document (1-based) and object.
func Parse(run, file string, data []byte) (*RunFacts, error) {
	r := &RunFacts{
		Name: run, File: file,
		Objects: map[string]string{}, Scheduling: map[string]string{},
		DRA: map[string]string{}, Entrypoints: map[string]string{},
		Security: map[string]string{},
	}
	var decoded []any
	namespaces := map[string]bool{}
	images := map[string]bool{}
	var owners []owner
	privileges := map[string]bool{}
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for idx := 1; ; idx++ {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, idx, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			idx--
			continue
		}
		where := fmt.Sprintf("%s: document %d", file, idx)
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w; expected a Kubernetes object", where, err)
		}
		kind, _ := obj["kind"].(string)
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if kind == "" || name == "" {
			return nil, fmt.Errorf("%s: kind and metadata.name are required; found kind %q, name %q", where, kind, name)
		}
		// Keyed by kind, namespace and name: a move to another namespace is
		// a removal and an addition, never an in-place edit.
		ref := kind + "/" + name
		if ns, _ := md["namespace"].(string); ns != "" {
			ref = kind + "/" + ns + "/" + name
			namespaces[ns] = true
		}
		where += " (" + ref + ")"
		decoded = append(decoded, obj)
		scopeFacts(kind, ref, obj, r.Security)
		if kind == "Service" {
			servicePrivileges(obj, privileges)
		}
		if _, dup := r.Objects[ref]; dup {
			return nil, fmt.Errorf("%s: %s appears twice in one run; expected each object once", where, ref)
		}
		canon, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		r.Objects[ref] = string(canon)
		collectImages(obj, images)

		o, err := decodeOwner(kind, ref, doc, canon, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if o != nil {
			owners = append(owners, *o)
		}
		draObjectFacts(kind, ref, obj, r.DRA)
	}
	for _, o := range owners {
		r.Pods = append(r.Pods, podGroups(o)...)
		schedulingFacts(o, r.Scheduling)
		if o.admission != "" {
			r.Scheduling[o.ref+" admission"] = o.admission
		}
		claimFacts(o, r.DRA)
		securityFacts(o, r.Security)
		for _, t := range o.templates {
			templatePrivileges(t.tmpl, privileges)
		}
		for _, p := range o.privileges {
			privileges[p] = true
		}
	}
	r.Privileges = tree.SortedKeys(privileges)
	if len(owners) > 0 {
		r.PodSecurity = string(podsecurity.Evaluate(decoded).Level)
	}
	r.Namespaces = tree.SortedKeys(namespaces)
	for img := range images {
		r.Images = append(r.Images, img)
	}
	sort.Strings(r.Images)
	return r, nil
}

// stripComments drops whole-line comments, so a document holding only
// `# Source: ...` lines (as `helm template` prints) counts as empty.
func stripComments(doc []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// decodeOwner decodes the kinds whose pods the summary counts, into their
// typed structs so a misspelt field cannot be silently read as zero.
func decodeOwner(kind, ref string, doc, canon []byte, r *RunFacts) (*owner, error) {
	switch kind {
	case "RayJob":
		job, err := decodeTyped[rayv1.RayJob](canon, doc)
		if err != nil {
			return nil, fmt.Errorf("%w; expected a %s RayJob", err, vocab.RayAPIVersion)
		}
		r.Entrypoints[ref] = job.Spec.Entrypoint
		if job.Spec.RayClusterSpec == nil {
			// clusterSelector: the job runs on a RayCluster listed on its own.
			return nil, nil
		}
		return rayOwner(ref, job.ObjectMeta, job.Spec.RayClusterSpec, admission(job.Labels, job.Spec.Suspend)), nil
	case "RayCluster":
		rc, err := decodeTyped[rayv1.RayCluster](canon, doc)
		if err != nil {
			return nil, fmt.Errorf("%w; expected a %s RayCluster", err, vocab.RayAPIVersion)
		}
		return rayOwner(ref, rc.ObjectMeta, &rc.Spec, admission(rc.Labels, capacity.Suspended(&rc.Spec))), nil
	case "Deployment":
		d, err := decodeTyped[appsv1.Deployment](canon, doc)
		if err != nil {
			return nil, fmt.Errorf("%w; expected an apps/v1 Deployment", err)
		}
		replicas := int64(1) // the API server's default
		if d.Spec.Replicas != nil {
			replicas = int64(*d.Spec.Replicas)
		}
		return &owner{ref: ref, labels: d.Labels, annotations: d.Annotations, templates: []podTemplate{{
			scope: "pods", group: "pods", pods: replicas, maxPods: replicas, tmpl: &d.Spec.Template,
		}}}, nil
	}
	return nil, nil
}

// decodeTyped decodes a document into its type from the JSON Parse already
// made of it, so a document is parsed as YAML once (the gate parses every
// run of a repository on both sides); where that fails (a scalar that only
// YAML's reading for the field's type accepts, a number where a string
// belongs), from the YAML itself, as before.
func decodeTyped[T any](canon, doc []byte) (T, error) {
	var v T
	if exactNumbers(canon) && json.Unmarshal(canon, &v) == nil {
		return v, nil
	}
	var fresh T
	err := yaml.Unmarshal(doc, &fresh)
	return fresh, err
}

// exactNumbers: every number in the JSON is an integer float64 holds
// exactly (at most 15 digits, no exponent), so decoding it into an integer
// field reads what the YAML said (2^53+1 read through float64 is not).
func exactNumbers(canon []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok && (len(strings.TrimPrefix(string(n), "-")) > 15 || strings.ContainsAny(string(n), "eE")) {
			return false
		}
	}
}

// admission is when a Ray object's pods are created if not at once: a
// Kueue queue label means Kueue's webhook suspends it on creation and Kueue
// resumes it on admission; spec.suspend alone means someone resumes it.
func admission(labels map[string]string, suspended bool) string {
	switch {
	case labels[vocab.KueueQueueLabel] != "":
		return "queued: Kueue's LocalQueue " + labels[vocab.KueueQueueLabel] + " admits it, then KubeRay creates its pods"
	case suspended:
		return "suspended: KubeRay creates its pods once spec.suspend is set to false"
	}
	return ""
}

// rayOwner counts a Ray object's pods at the size it runs at: a suspended
// or queued cluster has no pods yet, but the review weighs the run it will
// become (its admission says when).
func rayOwner(ref string, meta metav1.ObjectMeta, spec *rayv1.RayClusterSpec, admission string) *owner {
	autoscaling := capacity.Autoscaling(spec)
	o := &owner{ref: ref, labels: meta.Labels, annotations: meta.Annotations, privileges: headServicePrivileges(&spec.HeadGroupSpec), admission: admission}
	o.templates = append(o.templates, podTemplate{scope: "head", group: "head", pods: 1, maxPods: 1, tmpl: &spec.HeadGroupSpec.Template})
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		o.templates = append(o.templates, podTemplate{scope: "worker", group: g.GroupName,
			pods: capacity.WorkerPods(g, false), maxPods: capacity.MaxWorkerPods(g, autoscaling, false), tmpl: &g.Template})
	}
	return o
}
