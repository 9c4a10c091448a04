package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
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

func TestFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "expected", "out.yaml")
	require.Contains(t, failure(func(t testing.TB) { File(t, file, []byte("a")) }), "run `make golden`", "a missing golden file fails")
	write(t, file, "a")
	require.Empty(t, failure(func(t testing.TB) { File(t, file, []byte("a")) }))
	require.Contains(t, failure(func(t testing.TB) { File(t, file, []byte("b")) }), "is stale")

	*update = true
	t.Cleanup(func() { *update = false })
	File(t, file, []byte("b"))
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "b", string(got), "-update rewrites the file")
}

func TestFileOrNone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "findings.txt")
	require.Empty(t, failure(func(t testing.TB) { FileOrNone(t, file, nil) }), "no output, no file")
	write(t, file, "a finding\n")
	require.Contains(t, failure(func(t testing.TB) { FileOrNone(t, file, nil) }), "the output is now empty")
	require.Empty(t, failure(func(t testing.TB) { FileOrNone(t, file, []byte("a finding\n")) }))

	*update = true
	t.Cleanup(func() { *update = false })
	FileOrNone(t, file, nil)
	_, err := os.Stat(file)
	require.True(t, os.IsNotExist(err), "-update removes the file of an empty output")
}

func TestCases(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b", "run.yaml"), "")
	write(t, filepath.Join(dir, "a", "run.yaml"), "")
	write(t, filepath.Join(dir, "a", "expected", "z.txt"), "")
	write(t, filepath.Join(dir, "a", "expected", "y.txt"), "")
	write(t, filepath.Join(dir, "README.md"), "not a case")
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
