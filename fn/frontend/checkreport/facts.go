package checkreport

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Facts is what check reports about the rendered objects beyond the
// findings: the Pod Security level the pods need and what must exist
// before apply. Both are nil when nothing was rendered.
type Facts struct {
	PodSecurity   *podsecurity.Report
	Prerequisites []prereq.Prerequisite
	// prereqErr: the rendered objects could not be read back (a bug: the
	// render wrote them).
	prereqErr error
}

// FactsOf reads the facts of a render from its documents.
func FactsOf(res *pipeline.Result) Facts {
	if res.Docs == nil {
		return Facts{}
	}
	objs := make([]any, len(res.Docs))
	for i, d := range res.Docs {
		objs[i] = d
	}
	rep := podsecurity.Evaluate(objs)
	pre, err := prereq.FromObjects(objs)
	return Facts{PodSecurity: &rep, Prerequisites: pre, prereqErr: err}
}

// Print writes the POD SECURITY and PREREQUISITES sections of check's
// summary.
func (f Facts) Print(w io.Writer) {
	if f.PodSecurity == nil {
		return
	}
	r := f.PodSecurity
	fmt.Fprint(w, "\nPOD SECURITY\n------------\n")
	fmt.Fprintf(w, "  needs: %s (the least privileged level every pod fits, as KubeRay v1.5.0 creates them)\n", r.Level)
	for _, p := range r.Pods {
		fmt.Fprintf(w, "  %-10s %s %s\n", p.Level, p.Object, p.Pod)
	}
	// Baseline's refusals in full: they decide whether a common namespace
	// admits the run. Restricted's are counted by check (-o json lists each).
	whys := map[string]bool{}
	var restricted []string
	count := map[string]int{}
	for _, v := range r.Violations {
		if v.Level != podsecurity.Baseline {
			if count[v.Check] == 0 {
				restricted = append(restricted, v.Check)
			}
			count[v.Check]++
			continue
		}
		fmt.Fprintf(w, "  baseline refuses %s %s: %s", v.Object, v.Path, v.Reason)
		if v.Detail != "" {
			fmt.Fprintf(w, " (%s)", v.Detail)
		}
		fmt.Fprintf(w, " [%s]\n", v.Check)
		if v.Injected != "" {
			fmt.Fprintf(w, "    %s\n", v.Injected)
		}
		if v.Why != "" && !whys[v.Why] {
			whys[v.Why] = true
			fmt.Fprintf(w, "    why: %s\n", v.Why)
		}
	}
	if len(restricted) > 0 {
		sort.Strings(restricted)
		parts := make([]string, len(restricted))
		for i, c := range restricted {
			parts[i] = fmt.Sprintf("%s x%d", c, count[c])
		}
		fmt.Fprintf(w, "  restricted also refuses: %s (check -o json lists each field)\n", strings.Join(parts, ", "))
	}
	for _, u := range r.Unread {
		fmt.Fprintf(w, "  not judged: %s\n", u)
	}
	fmt.Fprint(w, "\nPREREQUISITES (must exist before apply; nrl-k8s preflight checks them)\n-------------\n")
	if f.prereqErr != nil {
		fmt.Fprintf(w, "  not computed: %v\n", f.prereqErr)
	}
	if len(f.Prerequisites) == 0 && f.prereqErr == nil {
		fmt.Fprintln(w, "  (none)")
	}
	for _, p := range f.Prerequisites {
		where := p.Name
		if p.Namespace != "" {
			where = p.Namespace + "/" + p.Name
		}
		opt := ""
		if p.Optional {
			opt = " (optional)"
		}
		fmt.Fprintf(w, "  %s %s %s%s: %s", p.Kind, p.APIVersion, where, opt, p.Why)
		if n := len(p.ReferencedBy) - 1; n > 0 {
			fmt.Fprintf(w, " (and %d more)", n)
		}
		fmt.Fprintln(w)
	}
}

// checkJSON is `check -o json`: one object per run.
type checkJSON struct {
	Valid     bool   `json:"valid"`
	Profile   string `json:"profile,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// DeclaredPodSecurity is the profile's podSecurity key ("" when unset).
	DeclaredPodSecurity string              `json:"declaredPodSecurity,omitempty"`
	PodSecurity         *podsecurity.Report `json:"podSecurity"`
	// Destinations: where each object goes, when MultiKueue dispatches
	// the run (absent otherwise).
	Destinations  *Destinations         `json:"destinations,omitempty"`
	Prerequisites []prereq.Prerequisite `json:"prerequisites"`
	Findings      []finding             `json:"findings"`
}

type finding struct {
	Severity diag.Severity `json:"severity"`
	File     string        `json:"file,omitempty"`
	Field    string        `json:"field,omitempty"`
	Message  string        `json:"message"`
}

// WriteJSON writes check -o json: validity, findings, Pod Security and
// prerequisites, as one object.
func WriteJSON(w io.Writer, res *pipeline.Result, f Facts) error {
	out := checkJSON{Valid: !res.Diags.HasErrors(), PodSecurity: f.PodSecurity, Prerequisites: f.Prerequisites, Findings: []finding{}}
	if out.Prerequisites == nil {
		out.Prerequisites = []prereq.Prerequisite{}
	}
	out.Destinations = DestinationsOf(res.Docs)
	if res.Profile != nil {
		out.Profile, out.Namespace = res.Profile.File, res.Profile.Infra.Namespace
	}
	for _, d := range res.Diags.Sorted() {
		out.Findings = append(out.Findings, finding(d))
	}
	if f.prereqErr != nil {
		out.Findings = append(out.Findings, finding{Severity: diag.Error, Message: "prerequisites: " + f.prereqErr.Error()})
		out.Valid = false
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
