// Package diag carries problems found anywhere in the pipeline to every entry
// point in one shape: severity, file, field path and a message that says
// what was found and what was expected.
package diag

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Severity follows the KRM results vocabulary.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Diagnostic is one finding.
type Diagnostic struct {
	Severity Severity
	File     string
	Field    string
	Message  string
}

// String is the finding on one line. File, field and message can hold text
// a pull request wrote (a key, a file name, a value quoted in a message), so
// each is printed as data: a newline or a control character in them is
// escaped and never starts a new line of a CI log (fn/support/safetext).
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(string(d.Severity))
	b.WriteString(": ")
	if d.File != "" {
		b.WriteString(safetext.Inline(d.File))
		b.WriteString(": ")
	}
	if d.Field != "" {
		b.WriteString(safetext.Inline(d.Field))
		b.WriteString(": ")
	}
	b.WriteString(safetext.Inline(d.Message))
	return b.String()
}

// List is an ordered collection of findings.
type List []Diagnostic

// Errorf appends an error.
func (l *List) Errorf(file, field, format string, args ...any) {
	*l = append(*l, Diagnostic{Severity: Error, File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning.
func (l *List) Warnf(file, field, format string, args ...any) {
	*l = append(*l, Diagnostic{Severity: Warning, File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Infof appends a note: something the render did that the user should know.
func (l *List) Infof(file, field, format string, args ...any) {
	*l = append(*l, Diagnostic{Severity: Info, File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any finding is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (l List) Errors() List {
	var out List
	for _, d := range l {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Sorted returns the findings errors first, then by file and field, so
// output does not depend on the order checks ran in.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	rank := map[Severity]int{Error: 0, Warning: 1, Info: 2}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Severity] != rank[b.Severity] {
			return rank[a.Severity] < rank[b.Severity]
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Field < b.Field
	})
	return out
}

// Err turns the errors of l into one error (nil when there are none).
func (l List) Err() error {
	errs := l.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &ListError{List: errs}
}

// ListError is a List used as an error.
type ListError struct{ List List }

func (e *ListError) Error() string {
	var parts []string
	for _, d := range e.List {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "\n")
}

// Located is an error that knows the file and field it is about (loader
// and parser errors), so that entry points can report them as fields.
type Located interface {
	error
	Location() (file, field, msg string)
}

// FromError recovers the findings carried by err, or wraps it as one error.
func FromError(err error, file string) List {
	var le *ListError
	if errors.As(err, &le) {
		return le.List
	}
	var loc Located
	if errors.As(err, &loc) {
		f, field, msg := loc.Location()
		return List{{Severity: Error, File: f, Field: field, Message: msg}}
	}
	msg := strings.TrimPrefix(err.Error(), file+": ")
	return List{{Severity: Error, File: file, Message: msg}}
}
