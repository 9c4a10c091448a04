package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// PodSecurity judges the pods the rendered objects make (as KubeRay
// creates them) against Pod Security. declared is the profile's
// podSecurity ("" when unset): every field that breaks it is an error.
// Unset, the run's level is an info and each field baseline refuses a
// warning: a namespace enforcing baseline (a common default) refuses those
// pods, and KubeRay's RayJob then waits in Initializing with no reason in
// its status. docs are a fresh render's: each is judged by the typed
// object it was encoded from (the same pods, with no JSON round trip).
func PodSecurity(file, declared string, docs []rendered.Doc) diag.List {
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
		if d.Obj != nil {
			objs[i] = d.Obj
		}
	}
	rep := podsecurity.Evaluate(objs)
	return podSecurityFindings(file, podsecurity.Level(declared), rep)
}

func podSecurityFindings(file string, declared podsecurity.Level, rep podsecurity.Report) diag.List {
	var ds diag.List
	for _, u := range rep.Unread {
		ds.Errorf(file, "", "Pod Security not judged: %s", u)
	}
	if len(rep.Pods) == 0 {
		return ds
	}
	for _, v := range rep.Violations {
		field := "output " + v.Object + "." + v.Path
		found := v.Reason
		if v.Detail != "" {
			found += " (" + v.Detail + ")"
		}
		switch {
		case declared != "" && !declared.Allows(needs(v.Level)):
			ds.Errorf(file, field, "Pod Security %s refuses it: found %s [check %s]; expected what %s allows: the profile's podSecurity says the namespace enforces %s (change the field, or podSecurity if the namespace allows more)",
				v.Level, found, v.Check, declared, declared)
		case declared == "" && v.Level == podsecurity.Baseline:
			ds.Warnf(file, field, "Pod Security baseline refuses it: found %s [check %s]; a namespace enforcing baseline or restricted refuses the pod (KubeRay's RayJob then waits in Initializing); expected nothing baseline forbids, or podSecurity: privileged in the profile when the namespace allows it",
				found, v.Check)
		}
	}
	if declared != "" && declared.Allows(rep.Level) {
		ds.Infof(file, "podSecurity", "every pod fits %s, which the namespace enforces (they need %s)", declared, rep.Level)
	} else {
		hint := "; podSecurity (unset) can declare the level the namespace enforces"
		if declared != "" {
			hint = ""
		}
		ds.Infof(file, "podSecurity", "the run's pods need Pod Security %s%s%s%s", rep.Level, refusedBy(rep), hint, whys(rep))
	}
	return ds
}

// whys says once why the run asks for what the stricter level refuses.
func whys(rep podsecurity.Report) string {
	seen := map[string]bool{}
	var out string
	for _, v := range rep.Violations {
		if v.Why != "" && !seen[v.Why] && v.Level == podsecurity.Baseline {
			seen[v.Why] = true
			out += "; why " + v.Check + ": " + v.Why
		}
	}
	return out
}

// needs is the level a pod needs when it breaks level l.
func needs(l podsecurity.Level) podsecurity.Level {
	if l == podsecurity.Baseline {
		return podsecurity.Privileged
	}
	return podsecurity.Baseline
}

// refusedBy names the checks that keep the run out of the stricter levels.
func refusedBy(rep podsecurity.Report) string {
	by := map[podsecurity.Level]map[string]bool{}
	for _, v := range rep.Violations {
		if by[v.Level] == nil {
			by[v.Level] = map[string]bool{}
		}
		by[v.Level][v.Check] = true
	}
	var parts []string
	for _, l := range []podsecurity.Level{podsecurity.Baseline, podsecurity.Restricted} {
		if len(by[l]) == 0 {
			continue
		}
		checks := make([]string, 0, len(by[l]))
		for c := range by[l] {
			checks = append(checks, c)
		}
		sort.Strings(checks)
		parts = append(parts, fmt.Sprintf("%s refuses %s", l, strings.Join(checks, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + "; nrl-k8s check lists each field)"
}
