package runstatus

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Text is the report for a terminal: the verdict first, then each kind of
// object, then the causes. Values come from the cluster; control
// characters in them are escaped so a message cannot forge a line.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s in namespace %s: %s\n  %s\n", clean(r.Run), clean(r.Namespace), r.Verdict, clean(r.Summary))
	for _, j := range r.RayJobs {
		fmt.Fprintf(&b, "RayJob %s: %s", clean(j.Name), orDash(j.JobDeploymentStatus))
		if j.JobStatus != "" {
			fmt.Fprintf(&b, ", job %s", clean(j.JobStatus))
		}
		if j.RayClusterName != "" {
			fmt.Fprintf(&b, ", cluster %s", clean(j.RayClusterName))
		}
		if j.ClusterSelector != "" {
			fmt.Fprintf(&b, ", clusterSelector %s", clean(j.ClusterSelector))
		}
		if j.Cleanup != "" {
			fmt.Fprintf(&b, ", cleanup %s", clean(j.Cleanup))
		}
		b.WriteString(j.text())
		b.WriteString("\n")
		if j.Reason != "" || j.Message != "" {
			fmt.Fprintf(&b, "  %s\n", clean(strings.TrimSpace(j.Reason+": "+j.Message)))
		}
	}
	for _, c := range r.RayClusters {
		fmt.Fprintf(&b, "RayCluster %s: state %s, workers ready %d/%d", clean(c.Name), orNone(c.State), c.ReadyWorkers, c.DesiredWorker)
		if c.CreatedBy != "" {
			fmt.Fprintf(&b, ", created by %s", clean(c.CreatedBy))
		}
		b.WriteString(c.text())
		b.WriteString("\n")
		for _, cond := range c.Conditions {
			fmt.Fprintf(&b, "  %s=%s %s %s\n", clean(cond.Type), clean(cond.Status), clean(cond.Reason), clean(cond.Message))
		}
	}
	if len(r.Pods) > 0 {
		phases := make([]string, 0, len(r.PodPhases))
		for p, n := range r.PodPhases {
			phases = append(phases, fmt.Sprintf("%d %s", n, clean(p)))
		}
		sort.Strings(phases)
		fmt.Fprintf(&b, "Pods: %s\n", strings.Join(phases, ", "))
		for _, p := range r.Pods {
			ready := ""
			if p.Ready {
				ready = " ready"
			}
			fmt.Fprintf(&b, "  %s (%s %s): %s%s", clean(p.Name), orNone(p.NodeType), clean(p.Group), clean(p.Phase), ready)
			if p.Waiting != "" {
				fmt.Fprintf(&b, ": %s", clean(p.Waiting))
			}
			b.WriteString("\n")
		}
	}
	for _, cl := range r.Claims {
		state := "not allocated"
		if cl.Allocated {
			state = "allocated"
		}
		fmt.Fprintf(&b, "ResourceClaim %s (pod %s): %s\n", clean(cl.Name), clean(cl.Pod), state)
	}
	for _, s := range r.Services {
		fmt.Fprintf(&b, "Service %s: %s\n", clean(s.Name), orNone(s.Info))
	}
	for _, d := range r.Deployments {
		fmt.Fprintf(&b, "Deployment %s: %d/%d ready\n", clean(d.Name), d.Ready, d.Desired)
	}
	for _, a := range r.Admissions {
		fmt.Fprintf(&b, "%s\n", clean(describeAdmission(a)))
	}
	for _, o := range r.Others {
		fmt.Fprintf(&b, "%s %s\n", clean(o.Kind), clean(o.Name))
	}
	if len(r.Problems) > 0 {
		b.WriteString("Problems:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s %s: %s\n", clean(p.Object), clean(p.Reason), clean(p.Message))
		}
	}
	b.WriteString(r.Worker.text())
	return b.String()
}

// clean: cluster text (event messages, conditions) is data and never
// leaves its line (fn/support/safetext, the one escaping rule).
func clean(s string) string { return safetext.Inline(s) }

// orNone is a cluster value, or "-"; escaped as every cluster value is.
func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return clean(s)
}

// Format is the report as `status` prints it: text, or json.
func (r Report) Format(format string) (string, error) {
	if format == "json" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return "", err
		}
		return string(b) + "\n", nil
	}
	return r.Text(), nil
}

// Final says whether nothing more will happen without someone acting
// (a watch stops there).
func (r Report) Final() bool {
	switch r.Verdict {
	case Failed, NotFound:
		return true
	case Succeeded:
		for _, j := range r.RayJobs {
			if j.Cleanup == "pending" {
				return false
			}
		}
		return true
	}
	return false
}
