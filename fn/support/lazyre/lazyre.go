// Package lazyre compiles a package-level regular expression on its first
// use instead of at package initialisation, which every nrl-k8s process
// pays whether or not its command uses the expression (docs/performance.md: a
// render compiled the chart commands' expressions, `version` all of them).
package lazyre

import (
	"regexp"
	"sync"
)

// New returns the compiled pattern, compiling it on the first call (a bad
// pattern panics there, as regexp.MustCompile would at init; each
// package's tests call every one).
func New(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
