// Package checkreport writes what `nrl-k8s check` prints about a render:
// the summary of what the run asks for, the Pod Security level and
// prerequisites, and the findings, as text or as one JSON object. It only
// presents; the judging is fn/engine/check's.
package checkreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Findings writes the CHECKS section: every finding, sorted, and the counts.
func Findings(w io.Writer, ds diag.List) {
	errs, warns := 0, 0
	for _, d := range ds {
		switch d.Severity {
		case diag.Error:
			errs++
		case diag.Warning:
			warns++
		}
	}
	fmt.Fprintf(w, "CHECKS\n------\n")
	for _, d := range ds.Sorted() {
		fmt.Fprintf(w, "  %s\n", d.String())
	}
	fmt.Fprintf(w, "  %d error(s), %d warning(s)\n", errs, warns)
}

// Summary prints what the run asks for, in the spirit of nrl-k8s check.
func Summary(w io.Writer, res *pipeline.Result) {
	in := res.Profile.Infra
	fmt.Fprintf(w, "namespace:   %s\n", in.Namespace)
	fmt.Fprintf(w, "image:       %s\n", in.Image)
	if len(in.ImagePullSecrets) > 0 {
		fmt.Fprintf(w, "pullSecrets: %s\n", strings.Join(in.ImagePullSecrets, ", "))
	}
	if in.ServiceAccount != nil {
		fmt.Fprintf(w, "sa:          %s\n", *in.ServiceAccount)
	}
	fmt.Fprintf(w, "scheduler:   %s\n", schedulerOf(res.Docs))
	fmt.Fprintf(w, "launch.mode: %s\n", in.Launch.Mode)
	if res.Recipe != nil {
		fmt.Fprintf(w, "recipe:      %s\n", strings.Join(res.Recipe.Files, " <- "))
		for _, k := range []string{"cluster.gpus_per_node", "cluster.num_nodes"} {
			if v, ok, _ := res.Recipe.Value(k); ok {
				fmt.Fprintf(w, "  %s = %v (%s)\n", k, v, res.Recipe.Origin(k))
			}
		}
	}
	script, rendered := renderedEntrypoint(res.Docs)
	ep := script.Text
	if !rendered && in.Launch.Entrypoint != nil {
		ep = *in.Launch.Entrypoint
	}
	if rendered {
		for _, inv := range script.Calls {
			what := "the driver's default config (no --config)"
			if inv.Config != "" {
				what = "--config " + inv.Config
			}
			fmt.Fprintf(w, "pod reads:   %s (line %d)\n", what, inv.Line)
		}
	}
	if ep != "" {
		fmt.Fprintln(w, "entrypoint:")
		for _, l := range strings.Split(ep, "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprint(w, "\nKUBERAY\n-------\n")
	for _, rc := range in.Kuberay.ByRole() {
		clusterSummary(w, rc)
	}
	if len(in.Deployments) > 0 {
		fmt.Fprint(w, "\nDEPLOYMENTS\n-----------\n")
		for _, d := range res.Docs {
			if d.Kind == "Deployment" {
				fmt.Fprintf(w, "  %s\n", d.Name)
			}
		}
	}
	var svc, dra []string
	for _, d := range res.Docs {
		switch d.Kind {
		case "Service":
			svc = append(svc, d.Name)
		case "ComputeDomain", "ResourceClaimTemplate":
			dra = append(dra, d.Kind+": "+d.Name)
		}
	}
	if len(svc) > 0 {
		fmt.Fprint(w, "\nSERVICES\n--------\n")
		for _, s := range svc {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(dra) > 0 {
		fmt.Fprint(w, "\nDRA RESOURCES\n-------------\n")
		for _, s := range dra {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if res.Docs != nil {
		if defs := check.AppliedDefaults(res.Profile, res.Mode, res.Docs); len(defs) > 0 {
			// Every value no key of the profile set, for a feature the
			// render uses: a setting of another cluster cannot hide here.
			fmt.Fprint(w, "\nDEFAULTS APPLIED (no profile key sets them)\n------------------------------------------\n")
			for _, d := range defs {
				line := fmt.Sprintf("  %s = %s", d.Key, d.Value)
				if d.Why != "" {
					line += " (" + d.Why + ")"
				}
				fmt.Fprintln(w, line)
			}
		}
	}
}

// renderedEntrypoint is the training job's entrypoint as rendered (the
// --config rewrite and the run's overrides applied): the first RayJob that
// runs a NeMo-RL driver.
func renderedEntrypoint(docs []rendered.Doc) (entrypoint.Script, bool) {
	for _, d := range docs {
		if d.Kind != "RayJob" {
			continue
		}
		spec, _ := d.Data["spec"].(map[string]any)
		ep, _ := spec["entrypoint"].(string)
		if s := entrypoint.Parse(ep); len(s.Calls) > 0 {
			return s, true
		}
	}
	return entrypoint.Script{}, false
}

// schedulerOf says which schedulers and KAI queues the rendered pods name,
// read from the objects (not from the profile's words).
func schedulerOf(docs []rendered.Doc) string {
	if docs == nil {
		return "(nothing rendered)"
	}
	names, queues := map[string]bool{}, map[string]bool{}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch t := v.(type) {
		case map[string]any:
			if key == "labels" {
				if q, ok := t[vocab.KAIQueueLabel].(string); ok {
					queues[q] = true
				}
			}
			if _, isPod := t["containers"]; isPod {
				n, _ := t["schedulerName"].(string)
				if n == "" {
					n = "default-scheduler"
				}
				names[n] = true
			}
			for k, c := range t {
				walk(c, k)
			}
		case []any:
			for _, c := range t {
				walk(c, key)
			}
		}
	}
	for _, d := range docs {
		walk(d.Data, "")
	}
	out := strings.Join(tree.SortedKeys(names), ", ")
	if out == "" {
		out = "(no pods)"
	}
	if len(queues) > 0 {
		out += " (queue=" + strings.Join(tree.SortedKeys(queues), ", ") + ")"
	}
	return out
}

func clusterSummary(w io.Writer, rc profile.RoleCluster) {
	c := rc.Cluster
	fmt.Fprintf(w, "  %s: %s\n", rc.Role, c.Name)
	if c.Spec == nil {
		return
	}
	head := c.Spec.HeadGroupSpec.Template.Spec
	if len(head.Containers) > 0 {
		l := head.Containers[0].Resources.Limits
		fmt.Fprintf(w, "    head    cpu=%s mem=%s\n", l.Cpu(), l.Memory())
	}
	// Counted as KubeRay starts them (fn/analyse/capacity): replicas clamped to
	// [minReplicas, maxReplicas] × numOfHosts, GPUs from every container.
	count := capacity.Count(c.Spec)
	total := count.Pods
	seg := ""
	if c.SegmentSize != nil && *c.SegmentSize > 0 && total > int64(*c.SegmentSize) {
		seg = fmt.Sprintf(" (%d segments x %d)", total/int64(*c.SegmentSize), *c.SegmentSize)
	}
	cpu, mem := "-", "-"
	if len(c.Spec.WorkerGroupSpecs) > 0 && len(c.Spec.WorkerGroupSpecs[0].Template.Spec.Containers) > 0 {
		l := c.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Resources.Limits
		cpu, mem = l.Cpu().String(), l.Memory().String()
	}
	if count.OverBound() {
		// The sums stop at the bound (check reports it): say so, not a number.
		fmt.Fprintf(w, "    workers more than %d (over the bound) cpu=%s mem=%s\n", capacity.MaxNodes, cpu, mem)
	} else {
		fmt.Fprintf(w, "    workers %dx%s cpu=%s mem=%s gpu=%d\n", total, seg, cpu, mem, count.GPUs)
	}
	for i, g := range count.Groups {
		spec := &c.Spec.WorkerGroupSpecs[i]
		if spec.Replicas != nil && int64(*spec.Replicas) == g.Replicas {
			continue
		}
		// Say where the count is not the replicas the profile wrote.
		fmt.Fprintf(w, "    group %s: %d pods: replicas=%s clamped to [minReplicas=%s, maxReplicas=%s] as KubeRay does\n",
			g.Name, g.Pods, int32Text(spec.Replicas, "unset"), int32Text(spec.MinReplicas, "0"), int32Text(spec.MaxReplicas, "unset"))
	}
	if count.Autoscaling {
		if count.MaxPods > capacity.MaxNodes {
			fmt.Fprintln(w, "    autoscaling up to: no ceiling (a worker group without maxReplicas)")
		} else {
			fmt.Fprintf(w, "    autoscaling up to: %d workers, %d GPUs (maxReplicas × numOfHosts)\n", count.MaxPods, count.MaxGPUs)
		}
	}
	if c.Daemon != nil {
		id := "—"
		if c.Daemon.SubmissionID != nil {
			id = *c.Daemon.SubmissionID
		}
		fmt.Fprintf(w, "    daemon  %s\n", id)
	} else {
		fmt.Fprintln(w, "    daemon  —")
	}
}

func int32Text(p *int32, unset string) string {
	if p == nil {
		return unset
	}
	return fmt.Sprint(*p)
}
