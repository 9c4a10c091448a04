// Package workload reads rendered objects back and lists the pods
// Kubernetes will be asked to create from them, as KubeRay v1.5.0's
// operator will build them (its injected containers included). Pod
// Security (fn/analyse/podsecurity) and the prerequisites (fn/analyse/prereq) read these
// pods rather than our templates, because the API server judges the Pod
// KubeRay creates, not the RayCluster we write.
package workload

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Object is one rendered object with its identity: as plain data, or as
// the typed object a render built (then Data is nil and Map encodes it).
type Object struct {
	APIVersion, Kind, Name, Namespace string
	Data                              map[string]any
	typed                             any
}

// Ref is how findings name an object: Kind/name.
func (o Object) Ref() string { return o.Kind + "/" + o.Name }

// Map is the object as plain data.
func (o Object) Map() (map[string]any, error) {
	if o.Data != nil || o.typed == nil {
		return o.Data, nil
	}
	var data map[string]any
	err := roundTrip(o.typed, &data)
	return data, err
}

// typedObject is what a Kubernetes Go type (with its TypeMeta set, as
// manifest.Build sets it) answers.
type typedObject interface {
	GetObjectKind() schema.ObjectKind
	GetName() string
	GetNamespace() string
}

// Objects reads what a render produced. Each element may be an rendered.Doc
// (what pipeline.Render returns), a map[string]any (a decoded YAML or JSON
// document, as `preflight -f RENDERED.yaml` reads them) or a typed object
// (*rayv1.RayJob, *appsv1.Deployment, ... as manifest.Build returns them),
// read as it is: its pods need no JSON round trip.
func Objects(objs []any) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for i, o := range objs {
		if t, ok := o.(typedObject); ok {
			if gvk := t.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
				out = append(out, Object{
					APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
					Name: t.GetName(), Namespace: t.GetNamespace(), typed: o,
				})
				continue
			}
		}
		var data map[string]any
		switch t := o.(type) {
		case rendered.Doc:
			data = t.Data
		case *rendered.Doc:
			data = t.Data
		case map[string]any:
			data = t
		default:
			if err := roundTrip(o, &data); err != nil {
				return nil, fmt.Errorf("object %d (%T): %w", i, o, err)
			}
		}
		obj := Object{Data: data}
		obj.APIVersion, _ = data["apiVersion"].(string)
		obj.Kind, _ = data["kind"].(string)
		if md, ok := data["metadata"].(map[string]any); ok {
			obj.Name, _ = md["name"].(string)
			obj.Namespace, _ = md["namespace"].(string)
		}
		out = append(out, obj)
	}
	return out, nil
}

// roundTrip reads from's JSON encoding into into.
func roundTrip(from, into any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// Pod is one kind of pod that applying the render makes someone create
// (every replica of a worker group is the same), and how many: the one
// pod-group model that check, preflight and placement (fn/analyse/placement)
// share.
type Pod struct {
	// Object is the rendered object the pod comes from (Kind/name);
	// Namespace is where the pod is created.
	Object, Namespace string
	// Role says which of the object's pods: "head", "worker group NAME",
	// "submitter", "pod" (a Deployment's or a Pod's own).
	Role string
	// Path is the pod template's field path in Object ("" for a Pod, whose
	// spec is at "spec").
	Path string
	Meta metav1.ObjectMeta
	Spec corev1.PodSpec
	// Injected are the containers KubeRay adds that the template does not
	// have, with where their settings come from.
	Injected []Injected
	// GenerateName is the prefix KubeRay names a Ray pod with (the API
	// server appends 5 characters); "" for other pods, whose names their
	// controller makes from an object already validated.
	GenerateName string
	// Count is how many of these pods the object makes at the size it
	// runs at: a worker group's capacity.WorkerPods (a suspended or queued
	// run counted as started, so it is placed whole), a Deployment's
	// replicas (1 when unset), 1 for a head, a submitter or a Pod.
	Count int64
}

// Name is how findings and preflight name the pods: "Kind/name role".
func (p Pod) Name() string {
	if p.Role == "" {
		return p.Object
	}
	return p.Object + " " + p.Role
}

// AsPod is the pod as the scheduler reads it.
func (p Pod) AsPod() *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: p.Meta, Spec: p.Spec}
	pod.Namespace = p.Namespace
	return pod
}

// SpecPath is the field path of the pod's spec in Object.
func (p Pod) SpecPath() string {
	if p.Path == "" {
		return "spec"
	}
	return p.Path + ".spec"
}

// Injected is a container KubeRay adds to a pod.
type Injected struct {
	// List is "initContainers" or "containers"; Index its place in Spec.
	List  string
	Index int
	Name  string
	// From is the field path (in the object) that decides the container's
	// securityContext. When FromContainer is true, From is a container (or
	// autoscalerOptions) whose securityContext the injected one copies, so
	// a finding about securityContext.X is fixed at From.securityContext.X;
	// otherwise From is the one field that makes KubeRay add it.
	From          string
	FromContainer bool
	// Why says what KubeRay does, for a reader of the finding.
	Why string
}

// InjectedAt is the injected container at list[index], if any.
func (p Pod) InjectedAt(list string, index int) (Injected, bool) {
	for _, in := range p.Injected {
		if in.List == list && in.Index == index {
			return in, true
		}
	}
	return Injected{}, false
}

// Pods lists the pods the objects make Kubernetes create, in object order
// then head, worker groups, submitter. An object that does not decode as
// its kind is an error naming it (the rest are still listed).
func Pods(objs []Object) ([]Pod, []error) {
	var pods []Pod
	var errs []error
	for _, o := range objs {
		ps, err := podsOf(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: does not decode as %s: %w", o.Ref(), o.Kind, err))
			continue
		}
		pods = append(pods, ps...)
	}
	return pods, errs
}

// Decode reads the object into its Go type.
func Decode(o Object, into any) error {
	if o.typed != nil {
		return roundTrip(o.typed, into)
	}
	return roundTrip(o.Data, into)
}

func podsOf(o Object) ([]Pod, error) {
	typed := o.typed
	if typed == nil {
		// Services, ConfigMaps, DRA objects, ComputeDomains: no pods. (We
		// render no StatefulSet, DaemonSet or ReplicaSet.)
		if typed = podMaker(o.Kind); typed == nil {
			return nil, nil
		}
		if err := Decode(o, typed); err != nil {
			return nil, err
		}
	}
	base := Pod{Object: o.Ref(), Namespace: o.Namespace, Count: 1}
	switch t := typed.(type) {
	case *rayv1.RayJob:
		return rayJobPods(base, t), nil
	case *rayv1.RayCluster:
		return clusterPods(base, t.Name, &t.Spec, "spec", nil), nil
	case *appsv1.Deployment:
		p := fromTemplate(base, "pod", "spec.template", &t.Spec.Template)
		if t.Spec.Replicas != nil {
			p.Count = int64(max(*t.Spec.Replicas, 0))
		}
		return []Pod{p}, nil
	case *batchv1.Job:
		return []Pod{fromTemplate(base, "pod", "spec.template", &t.Spec.Template)}, nil
	case *corev1.Pod:
		p := t.DeepCopy()
		base.Role, base.Meta, base.Spec = "pod", p.ObjectMeta, p.Spec
		return []Pod{base}, nil
	}
	return nil, nil
}

// podMaker is an empty object of the kind, for the kinds that make pods
// (nil for the rest).
func podMaker(kind string) any {
	switch kind {
	case "RayJob":
		return &rayv1.RayJob{}
	case "RayCluster":
		return &rayv1.RayCluster{}
	case "Deployment":
		return &appsv1.Deployment{}
	case "Job":
		return &batchv1.Job{}
	case "Pod":
		return &corev1.Pod{}
	}
	return nil
}

func fromTemplate(base Pod, role, path string, t *corev1.PodTemplateSpec) Pod {
	p := base
	p.Role, p.Path = role, path
	t = t.DeepCopy()
	p.Meta, p.Spec = t.ObjectMeta, t.Spec
	return p
}

// rayJobPods: KubeRay v1.5.0 creates a RayCluster from spec.rayClusterSpec
// (controllers/ray/rayjob_controller.go, constructRayClusterForRayJob), in
// SidecarMode with its submitter container appended to the head pod; in
// K8sJobMode (the CRD's default when submissionMode is unset) it creates a
// Job whose pod is spec.submitterPodTemplate, else a default one
// (controllers/ray/common/job.go, GetSubmitterTemplate). HTTPMode and
// InteractiveMode create no submitter pod.
func rayJobPods(base Pod, job *rayv1.RayJob) []Pod {
	var pods []Pod
	mode := job.Spec.SubmissionMode
	if job.Spec.RayClusterSpec != nil {
		var sidecar *Injected
		if mode == rayv1.SidecarMode {
			sidecar = &Injected{
				Name: submitterContainer, From: "spec.submissionMode",
				Why: "KubeRay v1.5.0 adds its ray-job-submitter container to the head pod in SidecarMode, with no securityContext and no field to set one",
			}
		}
		// GenerateRayClusterName: the job's name, a dash and 5 random
		// characters; a placeholder of the same length stands in.
		pods = append(pods, clusterPods(base, job.Name+"-xxxxx", job.Spec.RayClusterSpec, "spec.rayClusterSpec", sidecar)...)
	}
	if mode == rayv1.K8sJobMode || mode == "" {
		if job.Spec.SubmitterPodTemplate != nil {
			pods = append(pods, fromTemplate(base, "submitter", "spec.submitterPodTemplate", job.Spec.SubmitterPodTemplate))
		} else {
			p := base
			p.Role, p.Path = "submitter", "spec.submitterPodTemplate"
			// GetDefaultSubmitterContainer: the head's image, fixed
			// resources, nothing else that Pod Security or a prerequisite reads.
			p.Spec = corev1.PodSpec{
				Containers:    []corev1.Container{{Name: submitterContainer}},
				RestartPolicy: corev1.RestartPolicyNever,
			}
			p.Injected = []Injected{{
				List: "containers", Index: 0, Name: submitterContainer, From: "spec.submitterPodTemplate",
				Why: "submissionMode K8sJobMode (the default) makes KubeRay v1.5.0 create a submitter Job; without spec.submitterPodTemplate its pod is KubeRay's default, with no securityContext",
			}}
			pods = append(pods, p)
		}
	}
	return pods
}

// submitterContainer is KubeRay's utils.SubmitterContainerName.
const submitterContainer = "ray-job-submitter"

// rayPod gives a Ray pod the labels and name prefix KubeRay v1.5.0 gives it
// (controllers/ray/common/pod.go labelPod; controllers/ray/utils/util.go
// PodName, CheckLabel, GenerateIdentifier): the template's labels, then
// KubeRay's, of which ray.io/node-type, ray.io/group and ray.io/cluster
// cannot be overridden.
func rayPod(p *Pod, cluster string, node rayv1.RayNodeType, group, namePrefix string) {
	labels := map[string]string{}
	for k, v := range p.Meta.Labels {
		labels[k] = v
	}
	for k, v := range map[string]string{
		vocab.RayIsRayNodeLabel:  "yes",
		vocab.RayIdentifierLabel: checkLabel(cluster + "-" + string(node)),
		vocab.NameLabel:          "kuberay",
		vocab.CreatedByLabel:     "kuberay-operator",
	} {
		if _, set := labels[k]; !set {
			labels[k] = v
		}
	}
	labels[vocab.RayClusterLabel], labels[vocab.RayNodeTypeLabel], labels[vocab.RayGroupLabel] = cluster, string(node), group
	p.Meta.Labels = labels
	if len(namePrefix) > 50 {
		namePrefix = namePrefix[:50]
	}
	p.GenerateName = strings.ToLower(namePrefix + "-" + string(node) + "-")
}

// checkLabel is utils.CheckLabel: the last 63 characters, and an "r" for a
// leading punctuation character.
func checkLabel(s string) string {
	if len(s) > 63 {
		s = s[len(s)-63:]
	}
	if s != "" && unicode.IsPunct(rune(s[0])) {
		s = "r" + s[1:]
	}
	return s
}

// clusterPods are the pods the RayCluster reconciler of KubeRay v1.5.0
// creates (controllers/ray/common/pod.go, DefaultHeadPodTemplate,
// DefaultWorkerPodTemplate and BuildPod). Only what changes a Pod Security
// check or a prerequisite is restated here:
//   - every worker pod gets the init container wait-gcs-ready, whose
//     securityContext is a copy of the Ray container's (containers[0]) and
//     which mounts the same volumes (unless the operator runs with
//     ENABLE_INIT_CONTAINER_INJECTION=false, which we do not assume);
//   - with enableInTreeAutoscaling the head pod gets the autoscaler
//     container, whose securityContext is autoscalerOptions.securityContext
//     (nil when unset), and KubeRay creates the head's ServiceAccount
//     itself when the template names none;
//   - BuildPod's other additions (emptyDir volumes shared-mem and ray-logs,
//     exec probes, a metrics port without hostPort, env, the ray start
//     command) change no Pod Security check and reference nothing that must
//     exist.
//
// Each pod's labels are the template's with the ones KubeRay adds
// (labelPod), and GenerateName is utils.PodName's, so the API server's
// metadata rules can be checked on the pods themselves.
//
// The GCS fault-tolerance Redis cleanup Job copies the head pod minus
// containers, so it needs no more than the head.
func clusterPods(base Pod, cluster string, spec *rayv1.RayClusterSpec, path string, sidecar *Injected) []Pod {
	var pods []Pod
	headPath := path + ".headGroupSpec.template"
	head := fromTemplate(base, "head", headPath, &spec.HeadGroupSpec.Template)
	rayPod(&head, cluster, rayv1.HeadNode, vocab.RayHeadGroup, cluster)
	if spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling {
		c := corev1.Container{Name: "autoscaler"}
		if spec.AutoscalerOptions != nil && spec.AutoscalerOptions.SecurityContext != nil {
			c.SecurityContext = spec.AutoscalerOptions.SecurityContext.DeepCopy()
		}
		if spec.AutoscalerOptions != nil {
			for _, v := range spec.AutoscalerOptions.EnvFrom {
				c.EnvFrom = append(c.EnvFrom, *v.DeepCopy())
			}
			for _, v := range spec.AutoscalerOptions.Env {
				c.Env = append(c.Env, *v.DeepCopy())
			}
		}
		head.Spec.Containers = append(head.Spec.Containers, c)
		head.Injected = append(head.Injected, Injected{
			List: "containers", Index: len(head.Spec.Containers) - 1, Name: c.Name,
			From: path + ".autoscalerOptions", FromContainer: true,
			Why: "enableInTreeAutoscaling makes KubeRay v1.5.0 add the autoscaler container to the head pod, with autoscalerOptions.securityContext",
		})
	}
	if sidecar != nil {
		head.Spec.Containers = append(head.Spec.Containers, corev1.Container{Name: sidecar.Name})
		in := *sidecar
		in.List, in.Index = "containers", len(head.Spec.Containers)-1
		head.Injected = append(head.Injected, in)
	}
	pods = append(pods, head)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		gp := fmt.Sprintf("%s.workerGroupSpecs[%d].template", path, i)
		w := fromTemplate(base, "worker group "+g.GroupName, gp, &g.Template)
		rayPod(&w, cluster, rayv1.WorkerNode, g.GroupName, cluster+"-"+g.GroupName)
		w.Count = capacity.WorkerPods(g, false)
		if len(w.Spec.Containers) > 0 {
			ray := w.Spec.Containers[0]
			ic := corev1.Container{
				Name:            "wait-gcs-ready",
				SecurityContext: ray.SecurityContext.DeepCopy(),
				Env:             append([]corev1.EnvVar(nil), ray.Env...),
				VolumeMounts:    append([]corev1.VolumeMount(nil), ray.VolumeMounts...),
			}
			w.Spec.InitContainers = append(w.Spec.InitContainers, ic)
			w.Injected = append(w.Injected, Injected{
				List: "initContainers", Index: len(w.Spec.InitContainers) - 1, Name: ic.Name,
				From: gp + ".spec.containers[0]", FromContainer: true,
				Why: "KubeRay v1.5.0 adds the init container wait-gcs-ready to every worker pod with a copy of the Ray container's securityContext",
			})
		}
		pods = append(pods, w)
	}
	return pods
}

// Cluster is a Ray cluster a rendered object asks KubeRay for: a
// RayCluster's own spec, or the one a RayJob creates; the owner's metadata
// is what a gang scheduler reads of it (KAI's top owner, Kueue's queue).
type Cluster struct {
	// Object is the owner (Kind/name); Namespace where its pods go.
	Object, Namespace string
	Annotations       map[string]string
	Labels            map[string]string
	// Path is the spec's field path in Object.
	Path string
	Spec *rayv1.RayClusterSpec
}

// Clusters lists the Ray clusters the objects ask for, in object order,
// decoded once (a typed object is read as it is); a RayJob that submits to
// an existing cluster asks for none. An object that does not decode as its
// kind is an error naming it.
func Clusters(objs []Object) ([]Cluster, []error) {
	var out []Cluster
	var errs []error
	for _, o := range objs {
		if o.Kind != "RayJob" && o.Kind != "RayCluster" {
			continue
		}
		typed := o.typed
		if typed == nil {
			typed = podMaker(o.Kind)
			if err := Decode(o, typed); err != nil {
				errs = append(errs, fmt.Errorf("%s: does not decode as %s: %w", o.Ref(), o.Kind, err))
				continue
			}
		}
		c := Cluster{Object: o.Ref(), Namespace: o.Namespace}
		switch t := typed.(type) {
		case *rayv1.RayJob:
			if t.Spec.RayClusterSpec == nil {
				continue
			}
			c.Annotations, c.Labels, c.Path, c.Spec = t.Annotations, t.Labels, "spec.rayClusterSpec", t.Spec.RayClusterSpec
		case *rayv1.RayCluster:
			c.Annotations, c.Labels, c.Path, c.Spec = t.Annotations, t.Labels, "spec", &t.Spec
		default:
			continue
		}
		out = append(out, c)
	}
	return out, errs
}
