package preflight

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/rendered"
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

// InputOf derives what the run asks of its namespace. The namespace
// is the objects' own (render sets it), else -n, else the kubeconfig's.
func InputOf(docs []rendered.Doc, flagNS, contextNS string) (Input, error) {
	ns := ""
	for _, d := range docs {
		if d.Namespace != "" {
			if ns != "" && ns != d.Namespace {
				return Input{}, fmt.Errorf("the objects span namespaces %s and %s; expected one run in one namespace", ns, d.Namespace)
			}
			ns = d.Namespace
		}
	}
	switch {
	case ns == "" && flagNS != "":
		ns = flagNS
	case ns == "":
		ns = contextNS
	case flagNS != "" && flagNS != ns:
		return Input{}, &FlagError{Err: fmt.Errorf("-n %s: the objects are in namespace %s", flagNS, ns)}
	}
	pods, err := PodShapes(docs)
	if err != nil {
		return Input{}, err
	}
	claims, err := ClaimRequests(docs)
	if err != nil {
		return Input{}, err
	}
	in := Input{Namespace: ns, Pods: pods, Claims: claims}
	in.Needs, in.APIVersions, in.PodSecurity, in.PodSecurityReason, err = needsOf(docs)
	return in, err
}

// needsOf is what the rendered objects ask of the namespace: fn/analyse/prereq's
// list, the apiVersions in use, and fn/analyse/podsecurity's level with the fields
// that push it there.
func needsOf(docs []rendered.Doc) (needs []Need, apiVersions []string, level string, why []string, err error) {
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
		if av, _ := d.Data["apiVersion"].(string); av != "" {
			apiVersions = append(apiVersions, av)
		}
	}
	needs, err = prereq.FromObjects(objs)
	if err != nil {
		return nil, nil, "", nil, err
	}
	for _, n := range needs {
		apiVersions = append(apiVersions, n.APIVersion)
	}
	rep := podsecurity.Evaluate(objs)
	for _, v := range rep.Violations {
		if v.Level == rep.Level || (rep.Level == podsecurity.Privileged && v.Level == podsecurity.Baseline) {
			why = append(why, fmt.Sprintf("%s %s: %s (%s)", v.Object, v.Path, v.Reason, v.Detail))
		}
	}
	return needs, apiVersions, string(rep.Level), why, nil
}

// FlagError is a mistake in the command line (a namespace flag that
// contradicts the objects), as opposed to a problem with the objects.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

func (e *FlagError) Unwrap() error { return e.Err }
