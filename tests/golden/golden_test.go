// Package golden pins whole-run behaviour: each folder under tests/golden/
// is one case (run.yaml: a NemoRLRun whose paths are relative to it) with
// the expected output per mode under expected/. Regenerate with
// `make golden` (go test ./tests/golden -run Golden -update) and review the
// diff before committing.
package golden_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
)

// Case is one golden folder and its run.
type Case struct {
	golden.Case
	Run *runspec.NemoRLRun
}

func cases(t *testing.T) []Case {
	t.Helper()
	var out []Case
	for _, c := range golden.Cases(t, ".", "run.yaml") {
		file := c.Input("run.yaml")
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		run, err := runspec.Parse(file, data)
		require.NoError(t, err)
		out = append(out, Case{c, run})
	}
	return out
}

// modesOf: a run.yaml that sets spec.mode pins that one mode; otherwise the
// case is rendered in both cluster modes.
func modesOf(c Case) []runparams.Mode {
	if c.Run.Spec.Mode != "" {
		return []runparams.Mode{runparams.Mode(c.Run.Spec.Mode)}
	}
	return []runparams.Mode{runparams.RayJob, runparams.RayCluster}
}

func render(c Case, mode runparams.Mode) (out, findings []byte) {
	req := runrequest.Of(c.Run, filepath.ToSlash(c.Input("run.yaml")))
	req.Mode = mode
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), req)
	var fb bytes.Buffer
	for _, d := range res.Diags.Sorted() {
		// Paths relative to the case keep goldens independent of the checkout.
		d.File = strings.TrimPrefix(d.File, filepath.ToSlash(c.Dir)+"/")
		fb.WriteString(d.String())
		fb.WriteByte('\n')
	}
	if res.Diags.HasErrors() {
		return nil, fb.Bytes()
	}
	b, err := emit.Stream(res.Docs)
	if err != nil {
		fb.WriteString("emit: " + err.Error() + "\n")
		return nil, fb.Bytes()
	}
	return b, fb.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range cases(t) {
		for _, mode := range modesOf(c) {
			t.Run(c.Name+"/"+string(mode), func(t *testing.T) {
				out, findings := render(c, mode)
				golden.FileOrNone(t, c.Expected(string(mode)+".yaml"), out)
				golden.FileOrNone(t, c.Expected(string(mode)+".findings.txt"), findings)
			})
		}
	}
}

// Every case's golden output is used: no stray expected files.
func TestGoldenHasNoStrayFiles(t *testing.T) {
	for _, c := range cases(t) {
		want := map[string]bool{}
		for _, m := range modesOf(c) {
			want[string(m)+".yaml"] = true
			want[string(m)+".findings.txt"] = true
		}
		var stray []string
		for _, name := range c.ExpectedFiles(t) {
			if !want[name] {
				stray = append(stray, name)
			}
		}
		require.Empty(t, stray, c.Name)
	}
}
