package renderall

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// AllowFile is the runs repository's own allow-list for what `render-all
// --check` otherwise refuses: a run whose Pod Security level rises, whose
// namespaces change or which gains a privilege. It sits beside runs/ and is
// reviewed like code (give it a CODEOWNERS entry); the base branch's copy
// governs a pull request, so a pull request cannot allow itself.
const AllowFile = "review-allow.yaml"

// Allow is AllowFile's content.
//
//	apiVersion: nemo-rl.nvidia.com/v1alpha1
//	kind: ReviewAllow
//	default:                             # what every run may have (new runs included)
//	  namespaces: [rl-team]
//	runs:
//	  <run>:
//	    podSecurity: privileged          # the most privileged level the run may need
//	    namespaces: [rl-team, rl-infra]  # the namespaces its objects may be in
//	    privileges: [privileged, "capability IPC_LOCK", "hostPath /dev/shm", "sysctl net.*"]
type Allow struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Default    AllowRun            `json:"default,omitempty"`
	Runs       map[string]AllowRun `json:"runs,omitempty"`
}

// AllowRun is one run's exceptions (or, as Default, every run's).
type AllowRun struct {
	PodSecurity string   `json:"podSecurity,omitempty"`
	Namespaces  []string `json:"namespaces,omitempty"`
	// Privileges are patterns of the privileges the gate names
	// ("capability SYS_ADMIN", "sysctl net.core.somaxconn"); a trailing *
	// matches any rest ("sysctl net.*", "*").
	Privileges []string `json:"privileges,omitempty"`
}

// ParseAllow reads an allow-list strictly; file names it in errors.
func ParseAllow(file string, data []byte) (*Allow, error) {
	var a Allow
	if err := yaml.UnmarshalStrict(data, &a); err != nil {
		return nil, fmt.Errorf("%s: %w; expected apiVersion %s, kind ReviewAllow, default and runs.<run> with podSecurity / namespaces / privileges", file, err, vocab.APIVersion)
	}
	if a.APIVersion != vocab.APIVersion || a.Kind != "ReviewAllow" {
		return nil, fmt.Errorf("%s: apiVersion %q, kind %q; expected %s ReviewAllow", file, a.APIVersion, a.Kind, vocab.APIVersion)
	}
	entries := map[string]AllowRun{"default": a.Default}
	for run, r := range a.Runs {
		entries["runs."+run] = r
	}
	for _, key := range tree.SortedKeys(entries) {
		r := entries[key]
		if r.PodSecurity != "" && !slices.Contains(podsecurity.Levels, podsecurity.Level(r.PodSecurity)) {
			return nil, fmt.Errorf("%s: %s.podSecurity: %q; expected restricted, baseline or privileged", file, key, r.PodSecurity)
		}
		for i, p := range r.Privileges {
			if strings.TrimSpace(p) == "" || strings.Contains(strings.TrimSuffix(p, "*"), "*") {
				return nil, fmt.Errorf("%s: %s.privileges[%d]: %q; expected a privilege as the review names it, a trailing * at most", file, key, i, p)
			}
		}
	}
	return &a, nil
}

// entries are the allow-list entries that apply to run: its own and the
// default (nil allows nothing).
func (a *Allow) entries(run string) []AllowRun {
	if a == nil {
		return nil
	}
	out := []AllowRun{a.Default}
	if r, ok := a.Runs[run]; ok {
		out = append(out, r)
	}
	return out
}

// PermitsLevel: the run may need level.
func (a *Allow) PermitsLevel(run, level string) bool {
	for _, r := range a.entries(run) {
		if r.PodSecurity != "" && podsecurity.Level(r.PodSecurity).Allows(podsecurity.Level(level)) {
			return true
		}
	}
	return false
}

// PermitsNamespace: ns is listed for the run or for every run.
func (a *Allow) PermitsNamespace(run, ns string) bool {
	for _, r := range a.entries(run) {
		if slices.Contains(r.Namespaces, ns) {
			return true
		}
	}
	return false
}

// PermitsPrivilege: a pattern of the run's or the default's matches p.
func (a *Allow) PermitsPrivilege(run, p string) bool {
	for _, r := range a.entries(run) {
		for _, pat := range r.Privileges {
			if prefix, glob := strings.CutSuffix(pat, "*"); glob && strings.HasPrefix(p, prefix) || pat == p {
				return true
			}
		}
	}
	return false
}
