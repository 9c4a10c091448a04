// Package runspec is the NemoRLRun resource: one run's recipe, profile and
// parameters. It is the KRM function's config and the file render-all reads
// from runs/<run>/run.yaml, so both entry points describe a run the same way.
// It is the API type alone, a leaf that never imports the pipeline
// (fn/frontend/runrequest turns a run into a render request).
package runspec

import (
	"errors"
	"fmt"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Kind of the resource; its apiVersion is vocab.APIVersion.
const Kind = "NemoRLRun"

// NemoRLRun is the function config and run file kind.
type NemoRLRun struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata is the part of ObjectMeta a run uses.
type Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec names the inputs and the run parameters.
type Spec struct {
	// Recipe, Profile, Defaults and RecipeRoot are paths relative to the
	// directory of the file holding the run, at every entry point
	// (render-all, kustomize-inputs, the KRM function), so one run file
	// serves them all.
	Recipe  string `json:"recipe"`
	Profile string `json:"profile,omitempty"`
	// Defaults is an optional user defaults layer for the profile.
	Defaults string `json:"defaults,omitempty"`
	// RecipeRoot is the folder whose layout is NeMo-RL's checkout (the
	// CLI's --recipe-root), e.g. a NeMo-RL submodule: the recipe's path
	// below it is its path below launch.recipeRoot/codePath in the pod.
	// Empty: the recipe's nearest ancestor folder holding NeMo-RL's
	// examples/configs/ tree.
	RecipeRoot string `json:"recipeRoot,omitempty"`
	// Mode is rayjob (default), raycluster or dev.
	Mode      string   `json:"mode,omitempty"`
	User      string   `json:"user"`
	Namespace string   `json:"namespace,omitempty"`
	RunID     string   `json:"runId,omitempty"`
	Name      string   `json:"name,omitempty"`
	Overrides []string `json:"overrides,omitempty"`
	// Env answers ${oc.env:VAR}; a render never reads the process
	// environment of kustomize, kpt or CI.
	Env map[string]string `json:"env,omitempty"`
	// NoDeployments leaves out the profile's deployments and their
	// Services, which a user's runs share (the CLI's --no-deployments);
	// OnlyDeployments renders them alone (--only-deployments), so that one
	// run of a repository owns them and a kustomization lists each once.
	NoDeployments   bool `json:"noDeployments,omitempty"`
	OnlyDeployments bool `json:"onlyDeployments,omitempty"`
	// State is the run's declared life: run (default) or stopped
	// (runparams.State; docs/gitops.md, "A run's life in Git"), or, in a
	// runs repository, Removed.
	State string `json:"state,omitempty"`
}

// Removed is the state of a run on its way out of a runs repository:
// render-all renders no object for it, so the GitOps tool prunes every
// object of the run while its Flux Kustomization still exists, and the
// run file may be deleted in a later commit (docs/gitops.md, "Flux,
// kustomize"). It is not an engine state: nothing renders a removed run.
const Removed = "removed"

// IsRemoved says the run is declared Removed.
func (r *NemoRLRun) IsRemoved() bool { return r.Spec.State == Removed }

// Parse reads a NemoRLRun strictly: a key given twice and an unknown key
// are errors, so what a reviewer reads first is what renders (a later
// `mode:` would otherwise win silently).
//
// An unknown key names its line in data, which is the run file.
func Parse(file string, data []byte) (*NemoRLRun, error) { return parse(file, data, true) }

// ParseNode is Parse of a NemoRLRun re-encoded from a larger stream (a KRM
// function's config or items): its lines are not the user's file's, so
// none is named.
func ParseNode(file string, data []byte) (*NemoRLRun, error) { return parse(file, data, false) }

func parse(file string, data []byte, withLines bool) (*NemoRLRun, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error() + "; expected each key once", Err: err}
	}
	var r NemoRLRun
	strict, err := kjson.UnmarshalStrict(js, &r)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error(), Err: err}
	}
	if len(strict) > 0 {
		var msgs []string
		field := ""
		for _, e := range strict {
			msg := e.Error()
			if fe, ok := errors.AsType[kjson.FieldError](e); ok {
				if field == "" {
					field = fe.FieldPath()
				}
				if n := keyLine(data, fe.FieldPath()); withLines && n > 0 {
					msg = fmt.Sprintf("line %d: %s", n, msg)
				}
			}
			msgs = append(msgs, msg)
		}
		return nil, &Error{File: file, Field: field, Msg: fmt.Sprintf("%s; expected the fields of %s %s", strings.Join(msgs, "; "), vocab.APIVersion, Kind)}
	}
	if err := r.Validate(); err != nil {
		e := &Error{File: file, Msg: err.Error(), Err: err}
		if fe, ok := errors.AsType[*Error](err); ok {
			e.Field = fe.Field
		}
		return nil, e
	}
	return &r, nil
}

// keyLine is the line of the key at a dotted field path in the run file
// (the first document), 0 when it is not found. Read on the error path only.
func keyLine(data []byte, field string) int {
	var doc yaml3.Node
	if yaml3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, seg := range strings.Split(field, ".") {
		if n.Kind != yaml3.MappingNode {
			return 0
		}
		var next *yaml3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				line, next = n.Content[i].Line, n.Content[i+1]
				break
			}
		}
		if next == nil {
			return 0
		}
		n = next
	}
	return line
}

// Error is a NemoRLRun that cannot be used: the file, the field it is
// about ("" for the document as a whole) and the message, as values, so
// that every entry point reports the field without parsing the text.
type Error struct {
	File  string
	Field string
	// Msg is the message without the file (it starts with the field
	// where the field leads the sentence).
	Msg string
	Err error
}

func (e *Error) Error() string {
	if e.File == "" {
		return e.Msg
	}
	return e.File + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// fieldErr is a Validate finding about one field.
func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Msg: field + ": " + fmt.Sprintf(format, args...)}
}

// Validate checks the fields a render needs.
func (r *NemoRLRun) Validate() error {
	if r.APIVersion != vocab.APIVersion || r.Kind != Kind {
		return fmt.Errorf("found %s %s; expected apiVersion %s, kind %s", r.APIVersion, r.Kind, vocab.APIVersion, Kind)
	}
	if err := ValidateName(r.Metadata.Name); err != nil {
		return fieldErr("metadata.name", "%v", err)
	}
	if r.Spec.Recipe == "" {
		return fieldErr("spec.recipe", "is required; expected the path of the NeMo-RL recipe")
	}
	if strings.TrimSpace(r.Spec.User) == "" {
		return fieldErr("spec.user", "is required (a render must not depend on who runs it)")
	}
	if !runparams.Mode(r.Mode()).Valid() {
		return fieldErr("spec.mode", "found %q; expected rayjob, raycluster or dev", r.Spec.Mode)
	}
	if !runparams.State(r.Spec.State).Valid() && r.Spec.State != Removed {
		return fieldErr("spec.state", "found %q; expected run, stopped or removed", r.Spec.State)
	}
	if r.Spec.NoDeployments && r.Spec.OnlyDeployments {
		return fieldErr("spec.onlyDeployments", "is true with spec.noDeployments; expected one of them: only the shared deployments, or the run without them")
	}
	return nil
}

// RecipeRootOutside is the message for a spec.recipeRoot (given as the run
// names it) outside the package root. Nothing is read through the recipe
// root, but it says where the pod reads the recipe, so it is the
// repository's folder even when the recipe ships in a ConfigMap
// (recipeSource: configMap) and the root is not used.
func RecipeRootOutside(given string) string {
	return fmt.Sprintf("%q leaves the package root; expected a folder inside the repository (relative to the run's file), such as a NeMo-RL submodule, whatever the recipe source", given)
}

// Reserved are run names no entry point accepts: under kpt a run's objects
// go to <run>/, and inputs/ holds the package's input ConfigMaps.
var Reserved = map[string]bool{"inputs": true}

// ValidateName checks a run name: it names kpt's output directory and
// render-all's manifests/<run>.yaml, so it must be a Kubernetes object name
// (a DNS-1123 subdomain: lower case, digits, '-' and '.', at most 253
// characters), never a path, and not a reserved directory.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("is required")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("%q: %s; expected a Kubernetes object name (it names the run's output)", clip(name), strings.Join(msgs, "; "))
	}
	if Reserved[name] {
		return fmt.Errorf("%q is reserved (the directory of the package's input ConfigMaps); expected another name", name)
	}
	return nil
}

// clip shortens a long bad name in a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Mode is the mode with its default.
func (r *NemoRLRun) Mode() string {
	if r.Spec.Mode == "" {
		return string(runparams.RayJob)
	}
	return r.Spec.Mode
}
