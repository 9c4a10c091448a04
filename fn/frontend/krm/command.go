package krm

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// The function's exit codes, the CLI's (fn/frontend/cli): 1 an error
// result or unreadable input, 2 a wrong command line.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// Invocation is the function's command line after the flags: what
// `nrl-k8s fn` and `nrl-krm` parse with the same Flags.
type Invocation struct {
	// Files is generator mode's package root (--files).
	Files string
	// Runs are generator mode's files of NemoRLRuns (--runs).
	Runs []string
	// Args are the positional arguments: none (a ResourceList on stdin) or
	// the standalone form's function config and item files.
	Args []string
}

// Flags defines the function's flags on fs into inv, for the CLI's fn
// command (cobra's flag set) and the lean binary alike, so the two parse
// one command line.
func Flags(fs *pflag.FlagSet, inv *Invocation) {
	fs.StringVar(&inv.Files, "files", "", "generator mode: read input files below this directory (the package root) when no ConfigMap carries them")
	fs.StringArrayVar(&inv.Runs, "runs", nil, "generator mode: a file of NemoRLRuns to render too (repeatable; needs --files, read inside it)")
}

// Usage is the function's one-line synopsis and its help text (after the
// synopsis), shown by `nrl-k8s fn --help` and `nrl-krm --help`.
const (
	Usage = "[--files ROOT --runs FILE...] [FUNCTION_CONFIG [RESOURCES.yaml|- ...]]"
	Help  = `Run as a KRM function (kustomize exec/container function, kpt fn render).

With no arguments, read a ResourceList on stdin and write it back with the
rendered objects and the findings as results; exit 1 when a result is an
error. With arguments (standalone mode, for trying it out), the first is the
function config (a NemoRLRun) and the rest are files of input items
("-" for stdin); only the items are written.

Input files arrive as ConfigMaps annotated ` + vocab.FilesDirAnnotation + `: DIR (each
data key a file in DIR) or ` + vocab.FileAnnotation + `: PATH (one key). A NemoRLRun's
paths are relative to its own file, as render-all reads them: kpt and the
generator mode give the function each run's file, and under kustomize the
nrl-run-files ConfigMap that kustomize-inputs writes says where it is. See
docs/krm.md.

Generator mode (kustomize ` + "`generators:`" + `, the way for many runs): kustomize gives a
generator only its own config, so --files ROOT reads the recipes and profiles
below ROOT instead (confined to it, as render-all reads a repository; ROOT
itself inside the git work tree holding the kustomization) and
--runs FILE adds the NemoRLRuns of FILE (repeatable); relative paths are
relative to the working directory, which kustomize sets to the
kustomization's directory.`
)

// Run is the KRM function once its command line is parsed: the one body
// of `nrl-k8s fn` and of the lean binary `nrl-krm`, which therefore write
// the same bytes. It prints its own diagnostics to stderr (usage errors as
// the CLI prints them, "error: ...") and returns the exit code.
func Run(inv Invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts Options
	if len(inv.Runs) > 0 && inv.Files == "" {
		fmt.Fprintln(stderr, "error: --runs needs --files (the package root the runs' files and inputs are read below)")
		return exitUsage
	}
	if inv.Files != "" {
		var err error
		if opts, err = Generator(inv.Files, inv.Runs); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return exitUsage
		}
		if err := KustomizationRefuses("."); err != nil {
			fmt.Fprintln(stderr, "nrl-k8s fn: "+err.Error())
			return exitError
		}
	}
	in, err := ReadCapped(stdin, len(inv.Args) == 0 || slices.Contains(inv.Args[1:], "-"))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	rw := &kio.ByteReadWriter{Reader: in, Writer: stdout, KeepReaderAnnotations: true}
	if len(inv.Args) > 0 {
		if err := Standalone(rw, in, inv.Args); err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
	}
	if err := ExecuteWith(rw, stderr, opts); err != nil {
		fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		return exitError
	}
	return exitOK
}

// Main is the lean binary's command line (fn/cmd/nrl-krm): `nrl-k8s fn`'s
// flags and arguments, parsed with the same Flags, then Run. Every stderr
// line passes the guard the CLI's Main puts on it (fn/support/safetext).
func Main(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	guarded := safetext.Writer(stderr)
	defer func() { _ = guarded.Close() }() // a last line without newline
	stderr = guarded
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var inv Invocation
	Flags(fs, &inv)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n\nUsage:\n  %s %s\n\nFlags:\n%s", Help, name, Usage, fs.FlagUsages())
			return exitOK
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitUsage
	}
	inv.Args = fs.Args()
	return Run(inv, stdin, stdout, stderr)
}

// PluginMain is the process as kustomize's exec generator plugin (under the
// plugin's name, IsKustomizePlugin): args[0] is the file kustomize wrote
// the generator's config to; the rendered objects go to stdout as a plain
// YAML stream, diagnostics to stderr; 1 when a run fails (kustomize stops
// the build and prints stderr), 2 for the plugin's arguments or config.
func PluginMain(args []string, stdout, stderr io.Writer) int {
	err := RunPlugin(PluginOptions{Args: args, Dir: ".", Stdout: stdout})
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, err)
	if errors.Is(err, ErrPluginUsage) {
		return exitUsage
	}
	return exitError
}
