package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return "recorded" }
func (r *recorder) Errorf(f string, a ...any) { r.msg += fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }
func (r *recorder) Fatal(a ...any)            { r.Errorf("%s", fmt.Sprint(a...)); runtime.Goexit() }
func (r *recorder) FailNow()                  { runtime.Goexit() }

// failure runs f against a recorder and returns what it reported ("" if
// it passed).
func failure(f func(t testing.TB)) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r.msg
}

func write(t *testing.T, file, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
}

// File and FileOrNone compare, and under -update rewrite or remove.
func TestFile(t *testing.T) {
	file, none := filepath.Join(t.TempDir(), "expected", "out.yaml"), filepath.Join(t.TempDir(), "findings.txt")
	require.Contains(t, failure(func(t testing.TB) { File(t, file, []byte("a")) }), "run `make golden`", "a missing golden file fails")
	require.Empty(t, failure(func(t testing.TB) { FileOrNone(t, none, nil) }), "no output, no file")
	write(t, file, "a")
	write(t, none, "a finding\n")
	require.Empty(t, failure(func(t testing.TB) { File(t, file, []byte("a")) }))
	require.Contains(t, failure(func(t testing.TB) { File(t, file, []byte("b")) }), "is stale")
	require.Empty(t, failure(func(t testing.TB) { FileOrNone(t, none, []byte("a finding\n")) }))
	require.Contains(t, failure(func(t testing.TB) { FileOrNone(t, none, nil) }), "the output is now empty")

	*update = true
	t.Cleanup(func() { *update = false })
	File(t, file, []byte("b"))
	FileOrNone(t, none, nil)
	require.Equal(t, "b", testenv.ReadFile(t, file), "-update rewrites the file")
	_, err := os.Stat(none)
	require.True(t, os.IsNotExist(err), "-update removes the file of an empty output")
}

func TestCases(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b/run.yaml", "a/run.yaml", "a/expected/z.txt", "a/expected/y.txt", "README.md"} {
		write(t, filepath.Join(dir, f), "")
	}
	cases := Cases(t, dir, "run.yaml")
	require.Equal(t, []Case{{"a", filepath.Join(dir, "a")}, {"b", filepath.Join(dir, "b")}}, cases)
	require.Equal(t, filepath.Join(dir, "a", "expected", "y.txt"), cases[0].Expected("y.txt"))
	require.Equal(t, []string{"y.txt", "z.txt"}, cases[0].ExpectedFiles(t))
	require.Empty(t, cases[1].ExpectedFiles(t))

	require.NoError(t, os.Mkdir(filepath.Join(dir, "c"), 0o755))
	require.Contains(t, failure(func(t testing.TB) { Cases(t, dir, "run.yaml") }), "is a case with a run.yaml", "a folder without its input is a mistake")
	empty := t.TempDir()
	require.Contains(t, failure(func(t testing.TB) { Cases(t, empty, "run.yaml") }), "no case under")
}
