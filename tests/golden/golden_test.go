// Package golden pins whole-run behaviour: each folder under tests/golden/
// is one case (run.yaml: a NemoRLRun whose paths are relative to it) with
// the expected output per mode under expected/. Regenerate with
// `make golden` (go test ./tests/golden -run Golden -update) and review the
// diff before committing.
package golden_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runspec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Case is one golden folder.
type Case struct {
	Name string
	Dir  string
	Run  *runspec.NemoRLRun
}

// Cases lists the golden folders (exported for other test packages through
// a copy of this logic: keep the layout simple).
func cases(t *testing.T) []Case {
	t.Helper()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var out []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		file := filepath.Join(e.Name(), "run.yaml")
		data, err := os.ReadFile(file)
		require.NoError(t, err, "every folder under tests/golden is a case with a run.yaml")
		run, err := runspec.Parse(file, data)
		require.NoError(t, err)
		out = append(out, Case{Name: e.Name(), Dir: e.Name(), Run: run})
	}
	require.NotEmpty(t, out)
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
	req := runrequest.Of(c.Run, filepath.ToSlash(filepath.Join(c.Dir, "run.yaml")))
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
				outFile := filepath.Join(c.Dir, "expected", string(mode)+".yaml")
				findFile := filepath.Join(c.Dir, "expected", string(mode)+".findings.txt")
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(outFile), 0o755))
					writeOrRemove(t, outFile, out)
					writeOrRemove(t, findFile, findings)
					return
				}
				requireFile(t, outFile, out)
				requireFile(t, findFile, findings)
			})
		}
	}
}

func writeOrRemove(t *testing.T, file string, data []byte) {
	if len(data) == 0 {
		_ = os.Remove(file)
		return
	}
	require.NoError(t, os.WriteFile(file, data, 0o644))
}

func requireFile(t *testing.T, file string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		require.Empty(t, string(got), "%s is missing; run `make golden`", file)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is stale; run `make golden` and review the diff", file)
}

// Every case's golden output is used: no stray expected files.
func TestGoldenHasNoStrayFiles(t *testing.T) {
	for _, c := range cases(t) {
		want := map[string]bool{}
		for _, m := range modesOf(c) {
			want[string(m)+".yaml"] = true
			want[string(m)+".findings.txt"] = true
		}
		entries, _ := os.ReadDir(filepath.Join(c.Dir, "expected"))
		var stray []string
		for _, e := range entries {
			if !want[e.Name()] {
				stray = append(stray, e.Name())
			}
		}
		sort.Strings(stray)
		require.Empty(t, stray, c.Name)
	}
}
