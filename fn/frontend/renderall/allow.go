package renderall

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
)

// AllowFile is the runs repository's own allow-list for what `render-all
// --check` otherwise refuses: a run whose Pod Security level rises or whose
// namespaces change. It sits beside runs/ and is reviewed like code (give
// it a CODEOWNERS entry): a pull request that needs the exception shows it
// in its own diff.
const AllowFile = "review-allow.yaml"

// Allow is AllowFile's content.
//
//	apiVersion: nemo-rl.nvidia.com/v1alpha1
//	kind: ReviewAllow
//	runs:
//	  <run>:
//	    podSecurity: privileged          # the most privileged level the run may need
//	    namespaces: [rl-team, rl-infra]  # the namespaces its objects may be in
type Allow struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Runs       map[string]AllowRun `json:"runs"`
}

// AllowRun is one run's exceptions.
type AllowRun struct {
	PodSecurity string   `json:"podSecurity,omitempty"`
	Namespaces  []string `json:"namespaces,omitempty"`
}

// ParseAllow reads an allow-list strictly; file names it in errors.
func ParseAllow(file string, data []byte) (*Allow, error) {
	var a Allow
	if err := yaml.UnmarshalStrict(data, &a); err != nil {
		return nil, fmt.Errorf("%s: %w; expected apiVersion nemo-rl.nvidia.com/v1alpha1, kind ReviewAllow and runs.<run>.podSecurity / namespaces", file, err)
	}
	if a.APIVersion != "nemo-rl.nvidia.com/v1alpha1" || a.Kind != "ReviewAllow" {
		return nil, fmt.Errorf("%s: apiVersion %q, kind %q; expected nemo-rl.nvidia.com/v1alpha1 ReviewAllow", file, a.APIVersion, a.Kind)
	}
	for run, r := range a.Runs {
		if r.PodSecurity != "" && !slices.Contains(podsecurity.Levels, podsecurity.Level(r.PodSecurity)) {
			return nil, fmt.Errorf("%s: runs.%s.podSecurity: %q; expected restricted, baseline or privileged", file, run, r.PodSecurity)
		}
	}
	return &a, nil
}

// PermitsLevel: the run may need level (nil allows nothing).
func (a *Allow) PermitsLevel(run, level string) bool {
	if a == nil {
		return false
	}
	r, ok := a.Runs[run]
	return ok && r.PodSecurity != "" && podsecurity.Level(r.PodSecurity).Allows(podsecurity.Level(level))
}

// PermitsNamespaces: every namespace is listed for the run.
func (a *Allow) PermitsNamespaces(run string, nss []string) bool {
	if a == nil {
		return false
	}
	r, ok := a.Runs[run]
	if !ok {
		return false
	}
	for _, ns := range nss {
		if !slices.Contains(r.Namespaces, ns) {
			return false
		}
	}
	return true
}
