package preflight

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Write writes one line per prerequisite, or the report as JSON.
func Write(w io.Writer, rep Report, format string) error {
	if format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, l := range rep.Lines {
		ref := l.Kind + " " + l.Name
		if l.Namespace != "" {
			ref = l.Kind + " " + l.Namespace + "/" + l.Name
		}
		fmt.Fprintf(w, "%-12s %s", l.State, safetext.Inline(ref))
		if l.Why != "" {
			fmt.Fprintf(w, " (%s)", safetext.Inline(l.Why))
		}
		if l.Detail != "" {
			fmt.Fprintf(w, ": %s", safetext.Inline(l.Detail))
		}
		fmt.Fprintln(w)
	}
	ok, missing, cannot := rep.Counts()
	_, err := fmt.Fprintf(w, "\n%d ok, %d missing, %d cannot tell (namespace %s)\n", ok, missing, cannot, rep.Namespace)
	return err
}

// InputOf derives what the runs ask of their namespaces. A run's namespace
// is its objects' own (render sets it), else -n, else the kubeconfig's;
// objects in several namespaces (several runs) are each asked of their
// own, and placed one run after another.
func InputOf(docs []rendered.Doc, flagNS, contextNS string) (Input, error) {
	var spaces []string
	seen := map[string]bool{}
	for _, d := range docs {
		if d.Namespace != "" && !seen[d.Namespace] {
			seen[d.Namespace] = true
			spaces = append(spaces, d.Namespace)
		}
	}
	switch {
	case len(spaces) == 0 && flagNS != "":
		spaces = []string{flagNS}
	case len(spaces) == 0:
		spaces = []string{contextNS}
	case flagNS != "" && !seen[flagNS]:
		return Input{}, &FlagError{Err: fmt.Errorf("-n %s: the objects are in namespace %s", flagNS, strings.Join(spaces, ", "))}
	}
	pods, clusters, err := PodShapes(docs)
	if err != nil {
		return Input{}, err
	}
	for i := range pods {
		if pods[i].Namespace == "" {
			pods[i].Namespace = spaces[0]
		}
	}
	claims, err := ClaimRequests(docs)
	if err != nil {
		return Input{}, err
	}
	in := Input{Namespace: strings.Join(spaces, ", "), Pods: pods, Claims: claims, Gangs: placement.Gangs(clusters, spaces[0]), Queues: labelOf(docs, spaces[0], vocab.KueueQueueLabel), Priorities: labelOf(docs, spaces[0], vocab.KueuePriorityClassLabel)}
	in.Needs, in.APIVersions, err = needsOf(docs)
	if err != nil {
		return Input{}, err
	}
	for _, ns := range spaces {
		sp := Space{Namespace: ns}
		sp.PodSecurity, sp.PodSecurityReason = podSecurityOf(docs, ns, spaces[0])
		in.Spaces = append(in.Spaces, sp)
	}
	return in, nil
}

// needsOf is what the rendered objects ask of the namespace: fn/analyse/prereq's
// list and the apiVersions in use.
func needsOf(docs []rendered.Doc) (needs []Need, apiVersions []string, err error) {
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
		if av, _ := d.Data["apiVersion"].(string); av != "" {
			apiVersions = append(apiVersions, av)
		}
	}
	needs, err = prereq.FromObjects(objs)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range needs {
		apiVersions = append(apiVersions, n.APIVersion)
	}
	return needs, apiVersions, nil
}

// podSecurityOf is fn/analyse/podsecurity's level for the objects in
// namespace ns (those without one are in first), with the fields that
// push it there.
func podSecurityOf(docs []rendered.Doc, ns, first string) (string, []string) {
	var objs []any
	for _, d := range docs {
		if d.Namespace == ns || d.Namespace == "" && ns == first {
			objs = append(objs, d)
		}
	}
	rep := podsecurity.Evaluate(objs)
	var why []string
	for _, v := range rep.Violations {
		if v.Level == rep.Level || (rep.Level == podsecurity.Privileged && v.Level == podsecurity.Baseline) {
			why = append(why, fmt.Sprintf("%s %s: %s (%s)", v.Object, v.Path, v.Reason, v.Detail))
		}
	}
	return string(rep.Level), why
}

// labelOf is, per object with label key (keyed "namespace/Kind/name"), its
// value: Kueue's LocalQueue or WorkloadPriorityClass.
func labelOf(docs []rendered.Doc, first, key string) map[string]string {
	out := map[string]string{}
	for _, d := range docs {
		md, _ := d.Data["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		q, _ := labels[key].(string)
		if q == "" {
			continue
		}
		ns := d.Namespace
		if ns == "" {
			ns = first
		}
		out[ns+"/"+d.Kind+"/"+d.Name] = q
	}
	return out
}

// FlagError is a mistake in the command line (a namespace flag that
// contradicts the objects), as opposed to a problem with the objects.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

func (e *FlagError) Unwrap() error { return e.Err }
