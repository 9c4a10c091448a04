package chartgen

import (
	"fmt"
	"path"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// Modes are the chart's modes, in the engine's order.
var Modes = runparams.Modes

// Index is profiles/index.yaml: the profiles the chart packages.
type Index struct {
	Profiles []Entry `json:"profiles"`
	// Namespaces, when set, bind the chart to them: it refuses a release
	// (or a namespace value) anywhere else (chart-new --namespaces).
	Namespaces []string `json:"namespaces,omitempty"`
	// Dir is the index file's directory, as LoadIndex was given it.
	Dir string `json:"-"`
}

// Entry is one packaged profile and the recipe it is rendered with.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Profile     string `json:"profile"`
	Recipe      string `json:"recipe"`
	// InIndex holds profile and recipe as the index writes them (relative
	// to the index file): what a chart-new chart records, so that its
	// bytes do not depend on the directory it was made from.
	InIndex struct{ Profile, Recipe string } `json:"-"`
}

var entryNameRE = lazyre.New(NamePattern)

// CheckNamespaces is the rule for the namespaces a chart is bound to:
// DNS labels (namespace names), each once. The error starts with the
// offending entry's index, for the caller to prefix with the field.
func CheckNamespaces(ns []string) error {
	seen := map[string]bool{}
	for i, n := range ns {
		switch {
		case !entryNameRE().MatchString(n) || len(n) > 63:
			return fmt.Errorf("[%d]: found %q; expected a namespace name (a DNS label: lower case letters, digits and '-', at most 63 characters)", i, n)
		case seen[n]:
			return fmt.Errorf("[%d]: %q is listed twice", i, n)
		}
		seen[n] = true
	}
	return nil
}

// LoadIndex reads the index; profile and recipe paths come back relative
// to the working directory (the repository root for `make chart`).
func LoadIndex(file string) (*Index, error) {
	data, err := source.Disk{}.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := yaml.UnmarshalStrict(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w; expected profiles: [{name, description, profile, recipe}]", file, err)
	}
	idx.Dir = path.Dir(filepath.ToSlash(file))
	seen := map[string]bool{}
	for i, e := range idx.Profiles {
		field := fmt.Sprintf("%s: profiles[%d]", file, i)
		switch {
		case !entryNameRE().MatchString(e.Name):
			return nil, fmt.Errorf("%s.name: found %q; expected a DNS label (it is a chart value and a file name)", field, e.Name)
		case seen[e.Name]:
			return nil, fmt.Errorf("%s.name: %q is listed twice", field, e.Name)
		case e.Profile == "" || e.Recipe == "":
			return nil, fmt.Errorf("%s: profile and recipe are required", field)
		}
		seen[e.Name] = true
		idx.Profiles[i].InIndex.Profile = path.Clean(filepath.ToSlash(e.Profile))
		idx.Profiles[i].InIndex.Recipe = path.Clean(filepath.ToSlash(e.Recipe))
		idx.Profiles[i].Profile = source.Join(file, e.Profile)
		idx.Profiles[i].Recipe = source.Join(file, e.Recipe)
	}
	if len(idx.Profiles) == 0 {
		return nil, fmt.Errorf("%s: lists no profile", file)
	}
	if err := CheckNamespaces(idx.Namespaces); err != nil {
		return nil, fmt.Errorf("%s: namespaces%w", file, err)
	}
	return &idx, nil
}
