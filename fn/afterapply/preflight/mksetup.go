package preflight

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	schedkueue "github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/kueue"
)

// readSetup judges the manager's MultiKueue setup behind each of the run's
// LocalQueues: its ClusterQueue carries an AdmissionCheck whose controller
// is MultiKueue's; that check is Active and names a MultiKueueConfig; the
// config lists clusters; each MultiKueueCluster is Active and its
// kubeconfig Secret exists. A Secret is read as metadata only: its data,
// the worker's credentials, never reaches this process, so whether it
// holds key "kubeconfig" is told by the MultiKueueCluster's Active
// condition (Kueue connected with it), not by reading it.
func readSetup(ctx context.Context, c *kube.Conn, in Input) (*setup, []Line, error) {
	s := &setup{clusters: map[string]clusterState{}}
	var lines []Line
	for _, q := range queuesOf(in) {
		ns, name, _ := strings.Cut(q, "/")
		lq, out, err := c.Get(ctx, schedkueue.LocalQueues, ns, name)
		if kube.Stops(err) {
			return nil, nil, err
		}
		if out != kube.Found {
			continue // the LocalQueue line says why
		}
		cqName, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
		if cqName == "" {
			continue
		}
		more, err := s.queue(ctx, c, q, cqName)
		if err != nil {
			return nil, nil, err
		}
		lines = append(lines, more...)
	}
	return s, lines, nil
}

// queue judges the ClusterQueue behind LocalQueue q (namespace/name) and
// the MultiKueue check it carries.
func (s *setup) queue(ctx context.Context, c *kube.Conn, q, cqName string) ([]Line, error) {
	l := Line{Need: Need{Kind: "ClusterQueue", APIVersion: vocab.KueueAPIVersion, Name: cqName,
		Why: "LocalQueue " + q + " admits through it; MultiKueue dispatches only what a MultiKueue AdmissionCheck gates"}}
	cq, out, err := c.Get(ctx, schedkueue.ClusterQueues, "", cqName)
	if out != kube.Found {
		l.State, l.Detail = verdict(out, err)
		return []Line{l}, passUnreachable(err)
	}
	var unread []string
	for _, name := range schedkueue.QueueChecks(cq) {
		ac, out, err := c.Get(ctx, schedkueue.AdmissionChecks, "", name)
		if kube.Stops(err) {
			return nil, err
		}
		if out != kube.Found {
			st, d := verdict(out, err)
			unread = append(unread, fmt.Sprintf("AdmissionCheck %s %s %s", name, st, d))
			continue
		}
		if mk, config := schedkueue.MultiKueueCheck(ac); mk {
			l.State, l.Detail = OK, "carries AdmissionCheck "+name+" (controllerName "+vocab.MultiKueueControllerName+")"
			more, err := s.check(ctx, c, ac, config)
			return append([]Line{l}, more...), err
		}
	}
	l.State = Missing
	l.Detail = "carries no AdmissionCheck with controllerName " + vocab.MultiKueueControllerName + " (spec.admissionChecksStrategy): Kueue admits the run on the manager, where no KubeRay runs it"
	if len(unread) > 0 {
		l.Detail += "; " + strings.Join(unread, "; ")
	}
	return []Line{l}, nil
}

// check judges the MultiKueue AdmissionCheck and the config it names.
func (s *setup) check(ctx context.Context, c *kube.Conn, ac *unstructured.Unstructured, config string) ([]Line, error) {
	l := Line{Need: mkNeed("AdmissionCheck", "", ac.GetName(), whyMultiKueue)}
	if active, why := schedkueue.Active(ac); active {
		l.State, l.Detail = OK, "Active"
	} else {
		l.State, l.Detail = Missing, "not Active ("+why+"): the ClusterQueue admits nothing"
	}
	if config == "" {
		l.State, l.Detail = Missing, "spec.parameters name no MultiKueueConfig: MultiKueue knows no worker"
		return []Line{l}, nil
	}
	cl := Line{Need: mkNeed("MultiKueueConfig", "", config, "AdmissionCheck "+ac.GetName()+"'s parameters name it: its clusters are the workers")}
	cfg, out, err := c.Get(ctx, schedkueue.MultiKueueConfigs, "", config)
	if out != kube.Found {
		cl.State, cl.Detail = verdict(out, err)
		return []Line{l, cl}, passUnreachable(err)
	}
	s.config = config
	names := schedkueue.ConfigClusters(cfg)
	if len(names) > maxClusters {
		names = names[:maxClusters]
	}
	cl.State, cl.Detail = OK, "lists "+strings.Join(names, ", ")
	if len(names) == 0 {
		cl.State, cl.Detail = Missing, "lists no cluster: MultiKueue dispatches nowhere"
	}
	lines := []Line{l, cl}
	for _, name := range names {
		more, err := s.cluster(ctx, c, name)
		if err != nil {
			return nil, err
		}
		lines = append(lines, more...)
	}
	return lines, nil
}

// cluster judges one MultiKueueCluster and its kubeconfig Secret.
func (s *setup) cluster(ctx context.Context, c *kube.Conn, name string) ([]Line, error) {
	l := Line{Need: mkNeed("MultiKueueCluster", "", name, "MultiKueueConfig "+s.config+" lists it")}
	mkc, out, err := c.Get(ctx, schedkueue.MultiKueueClusters, "", name)
	if out != kube.Found {
		l.State, l.Detail = verdict(out, err)
		s.clusters[name] = clusterState{why: "MultiKueueCluster " + string(l.State) + " " + l.Detail}
		return []Line{l}, passUnreachable(err)
	}
	active, why := schedkueue.Active(mkc)
	s.clusters[name] = clusterState{active: active, why: why}
	l.State, l.Detail = OK, "Active"
	if !active {
		l.State, l.Detail = Missing, "not Active ("+why+"): MultiKueue does not dispatch there"
	}
	secret, elsewhere := schedkueue.KubeconfigSecret(mkc)
	if secret == "" {
		l.Detail += "; its kubeconfig comes from " + elsewhere + " (not checked)"
		return []Line{l}, nil
	}
	sl := Line{Need: Need{Kind: "Secret", APIVersion: "v1", Namespace: schedkueue.SystemNamespace, Name: secret,
		Why: fmt.Sprintf("MultiKueueCluster %s's kubeconfig (key %s)", name, schedkueue.KubeconfigKey)}}
	// Metadata only: the worker's credentials never reach this process.
	_, out, err = c.GetMetadata(ctx, kube.Secrets, schedkueue.SystemNamespace, secret)
	sl.State, sl.Detail = verdict(out, err)
	switch sl.State {
	case OK:
		sl.Detail = "exists (metadata only: its data is never read; the MultiKueueCluster's Active condition says Kueue connects with it)"
	case Missing:
		sl.Detail = "not found in " + schedkueue.SystemNamespace + " (Kueue's namespace unless its Configuration sets another)"
	}
	return []Line{l, sl}, passUnreachable(err)
}
