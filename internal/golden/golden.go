// Package golden is the test suite's one golden-file switch and case
// walker, in the spirit of kyaml's frameworktestutil.ResultsChecker: a
// behaviour is a folder <case>/ holding its inputs and an expected/ folder
// holding what the code under test must produce, and one -update flag
// (`make golden`) rewrites every expected file from the actual output
// instead of comparing. Any test package that imports this package takes
// -update; the Makefile's golden target finds those packages by their
// import of it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files from the actual output (make golden)")

// Updating reports whether this run rewrites golden files instead of
// comparing them (go test -update, `make golden`).
func Updating() bool { return *update }

// File compares got with the golden file, or rewrites it under -update.
func File(t testing.TB, file string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, got, 0o644))
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("golden file %s: %v; run `make golden`", file, err)
	}
	assert.Equal(t, string(want), string(got), "%s is stale; run `make golden` and review the diff", file)
}

// FileOrNone is File for an output that may be empty: empty output means
// there is no golden file (-update removes it).
func FileOrNone(t testing.TB, file string, got []byte) {
	t.Helper()
	if len(got) > 0 {
		File(t, file, got)
		return
	}
	if *update {
		if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("%s is stale (the output is now empty); run `make golden` and review the diff", file)
	}
}

// Case is one folder of a catalogue: its inputs, and expected/.
type Case struct {
	Name string // the folder's name
	Dir  string // the folder, as Cases was given its parent
}

// Input is the path of one of the case's input files.
func (c Case) Input(name string) string { return filepath.Join(c.Dir, name) }

// Expected is the path of one of the case's expected files.
func (c Case) Expected(name string) string { return filepath.Join(c.Dir, "expected", name) }

// Check compares got with expected/name, or rewrites it under -update.
func (c Case) Check(t testing.TB, name string, got []byte) {
	t.Helper()
	File(t, c.Expected(name), got)
}

// ExpectedFiles are the names in the case's expected/ folder, sorted.
func (c Case) ExpectedFiles(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.Dir, "expected"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Cases lists every folder of dir as a case, in name order; each must hold
// the input file marker (a folder without it is a mistake, not a skip).
func Cases(t testing.TB, dir, marker string) []Case {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c := Case{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		_, err := os.Stat(c.Input(marker))
		require.NoError(t, err, "every folder under %s is a case with a %s", dir, marker)
		out = append(out, c)
	}
	require.NotEmpty(t, out, "no case under %s", dir)
	return out
}
