package diag_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    diag.Diagnostic
		want string
	}{
		{"file and field", diag.Diagnostic{Severity: diag.Error, File: "p.yaml", Field: "cluster.gpus", Message: "expected 4"}, "error: p.yaml: cluster.gpus: expected 4"},
		{"no file", diag.Diagnostic{Severity: diag.Warning, Field: "launch", Message: "inert"}, "warning: launch: inert"},
		{"no field", diag.Diagnostic{Severity: diag.Info, File: "r.yaml", Message: "defaults applied"}, "info: r.yaml: defaults applied"},
		{"message only", diag.Diagnostic{Severity: diag.Error, Message: "boom"}, "error: boom"},
		{
			"hostile text stays on its line",
			diag.Diagnostic{Severity: diag.Error, File: "a\n::error::b.yaml", Field: "k\x1b[31m", Message: "bad\r\nvalue"},
			`error: a\n::error::b.yaml: k\x1b[31m: bad\r\nvalue`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.d.String())
		})
	}
}

func TestListBuildersAndErrors(t *testing.T) {
	var l diag.List
	require.False(t, l.HasErrors())
	require.NoError(t, l.Err())

	l.Warnf("p.yaml", "a", "warn %d", 1)
	l.Infof("p.yaml", "b", "note %s", "x")
	require.False(t, l.HasErrors())
	require.Empty(t, l.Errors())
	require.NoError(t, l.Err(), "warnings and notes are not an error")

	l.Errorf("r.yaml", "c", "bad %q", "v")
	l.Errorf("s.yaml", "", "worse")
	require.True(t, l.HasErrors())
	require.Equal(t, diag.List{
		{Severity: diag.Error, File: "r.yaml", Field: "c", Message: `bad "v"`},
		{Severity: diag.Error, File: "s.yaml", Message: "worse"},
	}, l.Errors())
	require.Len(t, l, 4, "Errors does not change the list")

	err := l.Err()
	require.EqualError(t, err, "error: r.yaml: c: bad \"v\"\nerror: s.yaml: worse")
	var le *diag.ListError
	require.ErrorAs(t, err, &le)
	require.Equal(t, l.Errors(), le.List)
}

// Sorted puts errors first, then orders by file and field; equal keys keep
// the order the checks found them in, and the list itself is not reordered.
func TestSorted(t *testing.T) {
	l := diag.List{
		{Severity: diag.Info, File: "a", Field: "x", Message: "i"},
		{Severity: diag.Warning, File: "b", Field: "y", Message: "w1"},
		{Severity: diag.Error, File: "b", Field: "z", Message: "e1"},
		{Severity: diag.Warning, File: "a", Field: "y", Message: "w2"},
		{Severity: diag.Error, File: "a", Field: "z", Message: "e2"},
		{Severity: diag.Error, File: "a", Field: "z", Message: "e3"},
		{Severity: diag.Error, File: "a", Field: "m", Message: "e4"},
	}
	orig := append(diag.List(nil), l...)
	var got []string
	for _, d := range l.Sorted() {
		got = append(got, d.Message)
	}
	require.Equal(t, []string{"e4", "e2", "e3", "e1", "w2", "w1", "i"}, got)
	require.Equal(t, orig, l)
}

type located struct{ file, field, msg string }

func (l located) Error() string                       { return l.file + ": " + l.msg }
func (l located) Location() (file, field, msg string) { return l.file, l.field, l.msg }

func TestFromError(t *testing.T) {
	list := diag.List{{Severity: diag.Error, File: "p.yaml", Field: "a", Message: "one"}, {Severity: diag.Error, File: "q.yaml", Message: "two"}}
	for _, tc := range []struct {
		name string
		err  error
		want diag.List
	}{
		{"a list error, wrapped", fmt.Errorf("render: %w", list.Err()), list},
		{"a located error, wrapped", fmt.Errorf("load: %w", located{"prof.yaml", "scheduler.queue", "expected a string"}),
			diag.List{{Severity: diag.Error, File: "prof.yaml", Field: "scheduler.queue", Message: "expected a string"}}},
		{"a plain error naming the file", errors.New("r.yaml: no such key"), diag.List{{Severity: diag.Error, File: "r.yaml", Message: "no such key"}}},
		{"a plain error naming another file", errors.New("other.yaml: broken"), diag.List{{Severity: diag.Error, File: "r.yaml", Message: "other.yaml: broken"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, diag.FromError(tc.err, "r.yaml"))
		})
	}
}
