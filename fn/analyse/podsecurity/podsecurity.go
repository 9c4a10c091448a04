// Package podsecurity says which Pod Security level
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
// a render needs: every pod KubeRay and the other controllers will create
// from it (fn/analyse/workload, KubeRay's injected containers included) is judged
// by the upstream k8s.io/pod-security-admission policy library, the code
// the API server's PodSecurity admission runs, at version "latest". The
// library decides; this package only says which field each refusal is
// about.
package podsecurity

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

// Level is a Pod Security level: "privileged", "baseline" or "restricted"
// (api.Level's values).
type Level string

const (
	Privileged Level = Level(api.LevelPrivileged)
	Baseline   Level = Level(api.LevelBaseline)
	Restricted Level = Level(api.LevelRestricted)
)

// Levels are the levels from least to most privileged.
var Levels = []Level{Restricted, Baseline, Privileged}

// rank orders levels by privilege: a namespace enforcing level L admits a
// pod that needs rank <= rank(L).
func rank(l Level) int { return slices.Index(Levels, l) }

// Allows reports whether a namespace enforcing l admits a pod that needs need.
func (l Level) Allows(need Level) bool { return rank(need) <= rank(l) }

// Violation is one field that keeps a pod out of a level.
type Violation struct {
	// Object is the rendered object (Kind/name); Pod which of its pods
	// ("head", "worker group NAME", "submitter", "pod").
	Object string `json:"object"`
	Pod    string `json:"pod"`
	// Path is the field path, in Object, of what the check refuses.
	Path string `json:"path"`
	// Level is the level the field breaks (it breaks every stricter one too).
	Level Level `json:"level"`
	// Check is the library's check ID; Reason and Detail its words.
	Check  string `json:"check"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	// Injected says, when a container KubeRay adds is refused, what KubeRay
	// does (the field to change is still Path).
	Injected string `json:"injected,omitempty"`
	// Why says why a NeMo-RL run asks for this, where we know.
	Why string `json:"why,omitempty"`
}

// PodLevel is the level one pod needs.
type PodLevel struct {
	Object string `json:"object"`
	Pod    string `json:"pod"`
	Path   string `json:"path"`
	Level  Level  `json:"level"`
}

// Report is what a render needs.
type Report struct {
	// Level is the least privileged level every pod fits ("restricted" when
	// the render makes no pod).
	Level Level `json:"level"`
	// Violations are every field that keeps a pod out of baseline or
	// restricted: baseline's first, then by object, path and check.
	Violations []Violation `json:"violations"`
	// Pods are each pod's level, in render order.
	Pods []PodLevel `json:"pods,omitempty"`
	// Unread are objects that could not be read as their kind: their pods
	// were not judged.
	Unread []string `json:"unread,omitempty"`
}

// judge is the library's evaluator and checks, built on first use: a
// command that judges no pod pays nothing for them.
type judge struct {
	ev  policy.Evaluator
	all []policy.Check
	err error
}

var checks = sync.OnceValue(func() judge {
	all := latestOnly(policy.DefaultChecks())
	ev, err := policy.NewEvaluator(all, nil)
	if err != nil {
		// The library's own default checks validate (its tests hold it);
		// should they not, nothing can be judged.
		return judge{err: fmt.Errorf("k8s.io/pod-security-admission's default checks: %w", err)}
	}
	return judge{ev: ev, all: all}
})

// Evaluate judges every pod the objects make (see workload.Objects for
// what objs may hold: rendered.Doc, decoded documents or typed objects).
func Evaluate(objs []any) Report {
	rep := Report{Level: Restricted, Violations: []Violation{}}
	if j := checks(); j.err != nil {
		rep.Level, rep.Unread = Privileged, []string{j.err.Error()}
		return rep
	}
	read, err := workload.Objects(objs)
	if err != nil {
		rep.Unread = append(rep.Unread, err.Error())
		return rep
	}
	pods, errs := workload.Pods(read)
	for _, e := range errs {
		rep.Unread = append(rep.Unread, e.Error())
	}
	for _, p := range pods {
		lvl := PodNeeds(&p.Meta, &p.Spec)
		rep.Pods = append(rep.Pods, PodLevel{Object: p.Object, Pod: p.Role, Path: p.Path, Level: lvl})
		if rank(lvl) > rank(rep.Level) {
			rep.Level = lvl
		}
		rep.Violations = append(rep.Violations, violations(p)...)
	}
	// Baseline refusals first: they are what makes a run need privileged.
	sort.SliceStable(rep.Violations, func(i, j int) bool {
		a, b := rep.Violations[i], rep.Violations[j]
		if a.Level != b.Level {
			return rank(a.Level) > rank(b.Level)
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Check < b.Check
	})
	return rep
}

// PodNeeds is the least privileged level the pod fits, as the admission
// plugin decides it (overrides between checks included).
func PodNeeds(meta *metav1.ObjectMeta, spec *corev1.PodSpec) Level {
	ev := checks().ev
	if ev == nil {
		return Privileged
	}
	for _, l := range []api.Level{api.LevelRestricted, api.LevelBaseline} {
		res := policy.AggregateCheckResults(ev.EvaluatePod(api.LevelVersion{Level: l, Version: api.LatestVersion()}, meta, spec))
		if res.Allowed {
			return Level(l)
		}
	}
	return Privileged
}

// latestOnly keeps each check's newest version, the one a namespace
// enforcing "latest" runs, and files it under the newest MinimumVersion of
// any check (what "latest" resolves to). The evaluator builds a table of
// checks for every minor version from each check's first version on; with
// one version per check, all at the newest, it builds the one table
// "latest" reads, with the same functions (TestLatestOnlyEvaluatorAgrees),
// for a small part of the cost every rendering process paid.
func latestOnly(all []policy.Check) []policy.Check {
	var newest api.Version
	for _, c := range all {
		if v := c.Versions[len(c.Versions)-1].MinimumVersion; newest.Older(v) {
			newest = v
		}
	}
	out := make([]policy.Check, len(all))
	for i, c := range all {
		last := c.Versions[len(c.Versions)-1]
		last.MinimumVersion = newest
		c.Versions = []policy.VersionedCheck{last}
		out[i] = c
	}
	return out
}

// latest is the check's newest version: what "latest" runs.
func latest(c policy.Check) policy.CheckPodFn { return c.Versions[len(c.Versions)-1].CheckPod }

// violations runs every check on its own and, for each refusal, finds the
// fields it is about: the pod-level fields (the pod with no container),
// each volume alone, and each container alone (with the pod-level security
// context it inherits). A container is blamed when the library's detail
// names it; KubeRay's injected containers are blamed on the field they are
// copied from.
func violations(p workload.Pod) []Violation {
	all := checks().all
	var out []Violation
	podOnly := p.Spec
	podOnly.InitContainers, podOnly.Containers, podOnly.EphemeralContainers = nil, nil, nil
	containerOnly := podOnly
	containerOnly.Volumes = nil
	// The pod with one container at a time (and the pod-level fields it
	// inherits), built on the first refusal and read by every check.
	var singles []single
	for _, c := range all {
		fn := latest(c)
		if fn(&p.Meta, &p.Spec).Allowed {
			continue
		}
		if singles == nil {
			singles = singleContainers(&p.Spec, containerOnly)
		}
		add := func(path, reason, detail, injected string) {
			out = append(out, Violation{
				Object: p.Object, Pod: p.Role, Path: path, Level: Level(c.Level), Check: string(c.ID),
				Reason: reason, Detail: detail, Injected: injected, Why: why(string(c.ID), detail),
			})
		}
		found := false
		if r := fn(&p.Meta, &podOnly); !r.Allowed {
			if len(podOnly.Volumes) > 0 && volumeCheck[string(c.ID)] {
				for i := range podOnly.Volumes {
					one := podOnly
					one.Volumes = podOnly.Volumes[i : i+1]
					if r := fn(&p.Meta, &one); !r.Allowed {
						suffix := fmt.Sprintf(".volumes[%d]", i)
						if c.ID == "hostPathVolumes" {
							suffix += ".hostPath"
						}
						add(p.SpecPath()+suffix, r.ForbiddenReason, r.ForbiddenDetail, "")
						found = true
					}
				}
			}
			if !found {
				for _, f := range podFields(string(c.ID), &podOnly) {
					add(p.SpecPath()+"."+f, r.ForbiddenReason, r.ForbiddenDetail, "")
				}
				found = true
			}
		}
		// Containers: grouped by the field they are blamed on, so a worker
		// and KubeRay's init container copying its securityContext make one
		// violation whose detail names both.
		type blame struct {
			path     string
			injected string
			spec     corev1.PodSpec
		}
		var order []string
		blamed := map[string]*blame{}
		for _, one := range singles {
			r := fn(&p.Meta, &one.spec)
			if r.Allowed || !strings.Contains(r.ForbiddenDetail, one.quoted) {
				continue
			}
			path := fmt.Sprintf("%s.%s[%d]", p.SpecPath(), one.list, one.i) + containerField(string(c.ID))
			injected := ""
			if in, ok := p.InjectedAt(one.list, one.i); ok {
				injected = in.Why
				// KubeRay's container is not in the render: blame the field it
				// copies (or, when it copies nothing, the field that adds it).
				path = in.From
				if in.FromContainer {
					path += containerField(string(c.ID))
				}
			}
			b := blamed[path]
			if b == nil {
				b = &blame{path: path, spec: containerOnly}
				blamed[path] = b
				order = append(order, path)
			}
			place(&b.spec, one.list, one.ctr)
			if injected != "" && b.injected == "" {
				b.injected = injected
			}
		}
		for _, path := range order {
			b := blamed[path]
			r := fn(&p.Meta, &b.spec)
			add(b.path, r.ForbiddenReason, r.ForbiddenDetail, b.injected)
			found = true
		}
		if !found {
			// A refusal no single part explains: name the pod spec.
			r := fn(&p.Meta, &p.Spec)
			add(p.SpecPath(), r.ForbiddenReason, r.ForbiddenDetail, "")
		}
	}
	return out
}

// single is a pod with one of its containers only: the list and index it
// has in the pod, its name as a check's detail quotes it.
type single struct {
	list   string
	i      int
	quoted string
	ctr    *corev1.Container
	spec   corev1.PodSpec
}

// singleContainers is the pod once per container (never nil).
func singleContainers(spec *corev1.PodSpec, containerOnly corev1.PodSpec) []single {
	out := []single{}
	visit(spec, func(list string, i int, ctr *corev1.Container) {
		one := single{list: list, i: i, quoted: fmt.Sprintf("%q", ctr.Name), ctr: ctr, spec: containerOnly}
		place(&one.spec, list, ctr)
		out = append(out, one)
	})
	return out
}

// visit calls f for every container, with its list and index.
func visit(spec *corev1.PodSpec, f func(list string, i int, c *corev1.Container)) {
	for i := range spec.InitContainers {
		f("initContainers", i, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f("containers", i, &spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		f("ephemeralContainers", i, &c)
	}
}

// place appends a copy of c to spec's list (copying the list: specs share
// nothing).
func place(spec *corev1.PodSpec, list string, c *corev1.Container) {
	switch list {
	case "initContainers":
		spec.InitContainers = append(slices.Clone(spec.InitContainers), *c)
	case "containers":
		spec.Containers = append(slices.Clone(spec.Containers), *c)
	default:
		spec.EphemeralContainers = append(slices.Clone(spec.EphemeralContainers), corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(*c)})
	}
}

// volumeCheck are the checks that read volumes.
var volumeCheck = map[string]bool{"hostPathVolumes": true, "restrictedVolumes": true}

// containerFields is the field, below a container, each check reads (the
// library's checks document their "Restricted Fields"; TestEveryCheckHasAField
// keeps this table complete when the library adds one).
var containerFields = map[string]string{
	"allowPrivilegeEscalation":   "securityContext.allowPrivilegeEscalation",
	"appArmorProfile":            "securityContext.appArmorProfile",
	"capabilities_baseline":      "securityContext.capabilities.add",
	"capabilities_restricted":    "securityContext.capabilities",
	"hostPorts":                  "ports",
	"hostProbesAndHostLifecycle": "", // probes and lifecycle handlers: the container
	"privileged":                 "securityContext.privileged",
	"procMount":                  "securityContext.procMount",
	"procMount_restricted":       "securityContext.procMount",
	"runAsNonRoot":               "securityContext.runAsNonRoot",
	"runAsUser":                  "securityContext.runAsUser",
	"seLinuxOptions":             "securityContext.seLinuxOptions",
	"seccompProfile_baseline":    "securityContext.seccompProfile",
	"seccompProfile_restricted":  "securityContext.seccompProfile",
	"windowsHostProcess":         "securityContext.windowsOptions.hostProcess",
	// Pod-level only: never blamed on a container.
	"hostNamespaces":    "",
	"hostPathVolumes":   "",
	"restrictedVolumes": "",
	"sysctls":           "",
}

// containerField is ".field" below a container, "" for the container itself.
func containerField(id string) string {
	if f := containerFields[id]; f != "" {
		return "." + f
	}
	return ""
}

// podFields are the pod-level fields a check refuses (below spec).
func podFields(id string, spec *corev1.PodSpec) []string {
	switch id {
	case "hostNamespaces":
		var fs []string
		for _, h := range []struct {
			name string
			on   bool
		}{{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC}} {
			if h.on {
				fs = append(fs, h.name)
			}
		}
		return fs
	case "sysctls":
		return []string{"securityContext.sysctls"}
	case "hostPathVolumes", "restrictedVolumes":
		return []string{"volumes"}
	}
	if f := containerFields[id]; strings.HasPrefix(f, "securityContext.") {
		// The pod-level securityContext has the same field name, except
		// capabilities, allowPrivilegeEscalation, privileged and procMount,
		// which are container-only (so never refused with no container).
		return []string{f}
	}
	return []string{"securityContext"}
}

// why explains the refusals a NeMo-RL run typically asks for.
func why(id, detail string) string {
	switch {
	case strings.HasPrefix(id, "capabilities") && strings.Contains(detail, "IPC_LOCK"):
		return "NCCL over RDMA (InfiniBand, RoCE, the GB300 profiles' roce-channel) registers its buffers with the NIC, which pins their pages in memory: that counts against RLIMIT_MEMLOCK, and only CAP_IPC_LOCK lets the process lock more than the small default"
	case id == "hostPathVolumes":
		return "a hostPath volume mounts a node's directory (the kind profile's shared workspace); Pod Security baseline forbids every hostPath volume"
	}
	return ""
}
