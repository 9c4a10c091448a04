package kueue

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// A MultiKueue manager's setup, read as Kueue v0.17.0 defines it
// (apis/kueue/v1beta2 admissioncheck_types.go, multikueue_types.go,
// clusterqueue_types.go), judged for preflight on the manager. The objects
// come from a cluster and are read by name, never trusted to hold what
// they should.

// PreflightDispatch judges the manager's MultiKueue setup behind each of
// the run's LocalQueues: its ClusterQueue carries an AdmissionCheck whose
// controller is MultiKueue's; that check is Active and names a
// MultiKueueConfig; the config lists clusters; each MultiKueueCluster is
// Active and its kubeconfig Secret exists. A Secret is read as metadata
// only (Reader.Exists): its data, the worker's credentials, never reaches
// the process, so whether it holds key "kubeconfig" is told by the
// MultiKueueCluster's Active condition (Kueue connected with it), not by
// reading it.
func (Integration) PreflightDispatch(ctx context.Context, r scheduler.Reader, run scheduler.PreflightRun) (scheduler.Workers, []scheduler.Line, error) {
	s := &setup{r: r, clusters: map[string]string{}}
	var lines []scheduler.Line
	for _, q := range queuesOf(run) {
		ns, name, _ := strings.Cut(q, "/")
		lq, out, err := r.Get(ctx, LocalQueues, ns, name)
		if r.Stops(err) {
			return scheduler.Workers{}, nil, err
		}
		if out != scheduler.Found {
			continue // the LocalQueue line says why
		}
		cqName, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
		if cqName == "" {
			continue
		}
		more, err := s.queue(ctx, q, cqName)
		if err != nil {
			return scheduler.Workers{}, nil, err
		}
		lines = append(lines, more...)
	}
	w := scheduler.Workers{Known: s.config != "", Named: s.clusters,
		Unlisted: fmt.Sprintf("MultiKueueConfig %s does not list it: MultiKueue never dispatches there", s.config)}
	return w, lines, nil
}

// setup is the setup as read: the MultiKueueConfig read ("" when none
// was) and, by MultiKueueCluster, "" when it is Active, else why not.
type setup struct {
	r        scheduler.Reader
	config   string
	clusters map[string]string
}

// maxClusters bounds the MultiKueueClusters read from one config: a
// manager's answer is not trusted to be small.
const maxClusters = 100

// whyMultiKueue is what every setup line is for.
const whyMultiKueue = "MultiKueue dispatches the run through it"

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// queuesOf are the run's LocalQueues, "namespace/name", sorted.
func queuesOf(run scheduler.PreflightRun) []string {
	seen := map[string]bool{}
	var out []string
	for key, q := range run.Queues {
		ns, _, _ := strings.Cut(key, "/")
		if k := ns + "/" + q; !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// queue judges the ClusterQueue behind LocalQueue q (namespace/name) and
// the MultiKueue check it carries.
func (s *setup) queue(ctx context.Context, q, cqName string) ([]scheduler.Line, error) {
	l := scheduler.Line{Need: mkNeed("ClusterQueue", cqName,
		"LocalQueue "+q+" admits through it; MultiKueue dispatches only what a MultiKueue AdmissionCheck gates")}
	cq, out, err := s.r.Get(ctx, ClusterQueues, "", cqName)
	if out != scheduler.Found {
		l.State, l.Detail = scheduler.Verdict(out, err)
		return []scheduler.Line{l}, passStops(s.r, err)
	}
	var unread []string
	for _, name := range QueueChecks(cq) {
		ac, out, err := s.r.Get(ctx, AdmissionChecks, "", name)
		if s.r.Stops(err) {
			return nil, err
		}
		if out != scheduler.Found {
			st, d := scheduler.Verdict(out, err)
			unread = append(unread, fmt.Sprintf("AdmissionCheck %s %s %s", name, st, d))
			continue
		}
		if mk, config := MultiKueueCheck(ac); mk {
			l.State, l.Detail = scheduler.OK, "carries AdmissionCheck "+name+" (controllerName "+vocab.MultiKueueControllerName+")"
			more, err := s.check(ctx, ac, config)
			return append([]scheduler.Line{l}, more...), err
		}
	}
	l.State = scheduler.Missing
	l.Detail = "carries no AdmissionCheck with controllerName " + vocab.MultiKueueControllerName + " (spec.admissionChecksStrategy): Kueue admits the run on the manager, where no KubeRay runs it"
	if len(unread) > 0 {
		l.Detail += "; " + strings.Join(unread, "; ")
	}
	return []scheduler.Line{l}, nil
}

// check judges the MultiKueue AdmissionCheck and the config it names.
func (s *setup) check(ctx context.Context, ac *unstructured.Unstructured, config string) ([]scheduler.Line, error) {
	l := scheduler.Line{Need: mkNeed("AdmissionCheck", ac.GetName(), whyMultiKueue)}
	if active, why := Active(ac); active {
		l.State, l.Detail = scheduler.OK, "Active"
	} else {
		l.State, l.Detail = scheduler.Missing, "not Active ("+why+"): the ClusterQueue admits nothing"
	}
	if config == "" {
		l.State, l.Detail = scheduler.Missing, "spec.parameters name no MultiKueueConfig: MultiKueue knows no worker"
		return []scheduler.Line{l}, nil
	}
	cl := scheduler.Line{Need: mkNeed("MultiKueueConfig", config, "AdmissionCheck "+ac.GetName()+"'s parameters name it: its clusters are the workers")}
	cfg, out, err := s.r.Get(ctx, MultiKueueConfigs, "", config)
	if out != scheduler.Found {
		cl.State, cl.Detail = scheduler.Verdict(out, err)
		return []scheduler.Line{l, cl}, passStops(s.r, err)
	}
	s.config = config
	names := ConfigClusters(cfg)
	if len(names) > maxClusters {
		names = names[:maxClusters]
	}
	cl.State, cl.Detail = scheduler.OK, "lists "+strings.Join(names, ", ")
	if len(names) == 0 {
		cl.State, cl.Detail = scheduler.Missing, "lists no cluster: MultiKueue dispatches nowhere"
	}
	lines := []scheduler.Line{l, cl}
	for _, name := range names {
		more, err := s.cluster(ctx, name)
		if err != nil {
			return nil, err
		}
		lines = append(lines, more...)
	}
	return lines, nil
}

// cluster judges one MultiKueueCluster and its kubeconfig Secret.
func (s *setup) cluster(ctx context.Context, name string) ([]scheduler.Line, error) {
	l := scheduler.Line{Need: mkNeed("MultiKueueCluster", name, "MultiKueueConfig "+s.config+" lists it")}
	notActive := func(why string) string {
		return fmt.Sprintf("MultiKueueCluster %s is not Active on the manager: %s", name, why)
	}
	mkc, out, err := s.r.Get(ctx, MultiKueueClusters, "", name)
	if out != scheduler.Found {
		l.State, l.Detail = scheduler.Verdict(out, err)
		s.clusters[name] = notActive("MultiKueueCluster " + string(l.State) + " " + l.Detail)
		return []scheduler.Line{l}, passStops(s.r, err)
	}
	active, why := Active(mkc)
	s.clusters[name] = ""
	l.State, l.Detail = scheduler.OK, "Active"
	if !active {
		s.clusters[name] = notActive(why)
		l.State, l.Detail = scheduler.Missing, "not Active ("+why+"): MultiKueue does not dispatch there"
	}
	secret, elsewhere := KubeconfigSecret(mkc)
	if secret == "" {
		l.Detail += "; its kubeconfig comes from " + elsewhere + " (not checked)"
		return []scheduler.Line{l}, nil
	}
	sl := scheduler.Line{Need: scheduler.Need{Kind: "Secret", APIVersion: "v1", Namespace: SystemNamespace, Name: secret,
		Why: fmt.Sprintf("MultiKueueCluster %s's kubeconfig (key %s)", name, KubeconfigKey)}}
	// Metadata only: the worker's credentials never reach this process.
	out, err = s.r.Exists(ctx, secrets, SystemNamespace, secret)
	sl.State, sl.Detail = scheduler.Verdict(out, err)
	switch sl.State {
	case scheduler.OK:
		sl.Detail = "exists (metadata only: its data is never read; the MultiKueueCluster's Active condition says Kueue connects with it)"
	case scheduler.Missing:
		sl.Detail = "not found in " + SystemNamespace + " (Kueue's namespace unless its Configuration sets another)"
	}
	return []scheduler.Line{l, sl}, passStops(s.r, err)
}

// mkNeed is the Need of a MultiKueue object of the manager (cluster-scoped).
func mkNeed(kind, name, why string) scheduler.Need {
	return scheduler.Need{Kind: kind, APIVersion: vocab.KueueAPIVersion, Name: name, Why: why}
}

// SystemNamespace is where Kueue's manager runs unless its Configuration
// says otherwise, and so where MultiKueue reads a worker's kubeconfig
// Secret (locationType Secret).
const SystemNamespace = "kueue-system"

// KubeconfigKey is the key of that Secret MultiKueue reads.
const KubeconfigKey = "kubeconfig"

// Active reads an object's Active condition (AdmissionCheck,
// MultiKueueCluster, ClusterQueue): whether it is True and, when not,
// Kueue's reason and message, bounded.
func Active(u *unstructured.Unstructured) (bool, string) {
	c, ok := conditions(u)["Active"]
	if !ok {
		return false, "no Active condition yet"
	}
	if c.status == "True" {
		return true, ""
	}
	return false, strings.TrimSuffix(bound(c.reason)+": "+bound(c.message), ": ")
}

// QueueChecks are the AdmissionChecks a ClusterQueue gates admission on
// (spec.admissionChecksStrategy.admissionChecks[].name).
func QueueChecks(cq *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(cq.Object, "spec", "admissionChecksStrategy", "admissionChecks")
	var out []string
	for _, r := range rules {
		m, _ := r.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// MultiKueueCheck reads an AdmissionCheck: whether its controller is
// MultiKueue's, and the MultiKueueConfig its parameters name ("" when they
// name none or another kind).
func MultiKueueCheck(ac *unstructured.Unstructured) (multikueue bool, config string) {
	controller, _, _ := unstructured.NestedString(ac.Object, "spec", "controllerName")
	if controller != vocab.MultiKueueControllerName {
		return false, ""
	}
	p, _, _ := unstructured.NestedStringMap(ac.Object, "spec", "parameters")
	if p["apiGroup"] != vocab.KueueGroup || p["kind"] != "MultiKueueConfig" {
		return true, ""
	}
	return true, p["name"]
}

// ConfigClusters are the MultiKueueClusters a MultiKueueConfig lists.
func ConfigClusters(cfg *unstructured.Unstructured) []string {
	names, _, _ := unstructured.NestedStringSlice(cfg.Object, "spec", "clusters")
	return names
}

// KubeconfigSecret is the Secret a MultiKueueCluster's kubeconfig is in
// (clusterSource.kubeConfig with locationType Secret, the default), or
// where else it comes from when not a Secret ("Path", a ClusterProfile).
func KubeconfigSecret(mkc *unstructured.Unstructured) (secret, elsewhere string) {
	kc, ok, _ := unstructured.NestedStringMap(mkc.Object, "spec", "clusterSource", "kubeConfig")
	if !ok {
		if profile, _, _ := unstructured.NestedString(mkc.Object, "spec", "clusterSource", "clusterProfileRef", "name"); profile != "" {
			return "", "ClusterProfile " + bound(profile)
		}
		return "", "no spec.clusterSource"
	}
	if t := kc["locationType"]; t != "" && t != "Secret" {
		return "", "locationType " + bound(t) + " " + bound(kc["location"])
	}
	return kc["location"], ""
}
