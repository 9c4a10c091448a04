// Package cli is the nrl-k8s command line: a thin adapter that turns flags
// into a pipeline.Request and results into files, text and exit codes.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // the inputs are invalid
	ExitUsage = 2 // the command line is wrong
)

// Version is set at link time.
var Version = "dev"

type usageError struct{ error }

// Main runs the CLI and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Every message line passes the one guard for text from a pull request
	// (fn/support/safetext): CI prints stderr to its log.
	guarded := safetext.Writer(stderr)
	defer func() { _ = guarded.Close() }() // a last line without newline
	stderr = guarded
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := unknownCommand(root, args)
	if err == nil {
		err = root.Execute()
	}
	if err == nil {
		return ExitOK
	}
	if _, ok := errors.AsType[usageError](err); ok {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}
	var ex exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return ExitError
}

// exitError carries a code after the command already reported its findings.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "nrl-k8s",
		Short:         "Render and check NeMo-RL runs as KubeRay manifests",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Every command, in one list: rendering, the chart, the KRM function and
	// kustomize, after apply, the PR workflow, the rest.
	root.AddCommand(
		renderCmd(), checkCmd(), valuesCmd(),
		chartDataCmd(), chartPackageCmd(), chartNewCmd(), recipeMergeCmd(),
		fnCmd(), kustomizeInputsCmd(), kustomizePluginCmd(), kustomizeConfigCmd(),
		preflightCmd(), policyCmd(),
		renderAllCmd(), diffCmd(),
		schemaCmd(), statusCmd(), logsCmd(), versionCmd(),
	)
	// Usage mistakes exit 2. cobra reports them as plain errors, so they are
	// marked where cobra makes them: flag parsing (inherited by every
	// subcommand) and each command's argument check; an unknown command is
	// the root's argument check.
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	markArgErrors(root)
	return root
}

func markArgErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markArgErrors(sub)
	}
}

// completeValues makes shell completion (`nrl-k8s completion bash|zsh|fish`)
// offer a flag's values, and no file names.
func completeValues(c *cobra.Command, flag string, values ...string) {
	// Registering fails only for an unknown flag or a second registration:
	// both are programming errors the completion test catches.
	_ = c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// unknownCommand is the usage error for `nrl-k8s NAME ...` where NAME is no
// command: cobra would print the root's help for `nrl-k8s NAME --help` and
// exit 0, and a script would take that for success.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) {
		return nil // shell completion's own hidden command
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	cmd, rest, err := root.Find(args)
	if err != nil || cmd != root {
		return nil
	}
	for _, a := range rest {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			return usageError{fmt.Errorf("unknown command %q for %q; expected one of the commands `nrl-k8s --help` lists", a, root.Name())}
		}
	}
	return nil
}

// runFlags are the flags every recipe-taking command shares.
type runFlags struct {
	infra      string
	defaults   string
	mode       string
	user       string
	namespace  string
	runID      string
	name       string
	image      string
	labels     []string
	annos      []string
	noDeploy   bool
	state      string
	onlyDeploy bool
	recipeRoot string
	root       string
	untracked  bool
}

func (f *runFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.infra, "infra", "", "infra profile (<recipe>.<profile>.infra.yaml); optional when the recipe has an infra: mapping")
	c.Flags().StringVar(&f.defaults, "defaults", os.Getenv("NRL_K8S_DEFAULTS"), "user defaults layer for the profile (default $NRL_K8S_DEFAULTS)")
	c.Flags().StringVar(&f.user, "user", "", "submitting user for ${user:} (default $NRL_K8S_USER, else the OS user)")
	c.Flags().StringVarP(&f.namespace, "namespace", "n", "", "namespace (overrides the profile's)")
	c.Flags().StringVar(&f.runID, "run-id", "", "run id: labels the jobs; in raycluster mode names the training job and sets NRL_K8S_RUN_ID")
	c.Flags().StringVar(&f.name, "name", "", "run name: names every object the run owns and labels them app.kubernetes.io/instance (default: the profile's names)")
	c.Flags().StringVar(&f.image, "image", "", "image of every container of the run's pods (default: the profile's)")
	c.Flags().StringArrayVar(&f.labels, "label", nil, "KEY=VALUE label for every object and pod template of the run (repeatable)")
	c.Flags().StringVar(&f.state, "state", "run", "the run's declared life: run, or stopped (rendered so that nothing starts it: docs/gitops.md, \"A run's life in Git\")")
	c.Flags().BoolVar(&f.noDeploy, "no-deployments", false, "leave out the profile's deployments and their Services (the services shared by the user's runs: render them once with --only-deployments)")
	c.Flags().BoolVar(&f.onlyDeploy, "only-deployments", false, "render only the profile's deployments and their Services, the services the user's runs share, to apply once per user and namespace (the chart's mode=services); --label, --annotation and --image apply to them")
	c.Flags().StringArrayVar(&f.annos, "annotation", nil, "KEY=VALUE annotation for every object and pod template of the run (repeatable)")
	c.Flags().StringVar(&f.recipeRoot, "recipe-root", "", "local recipe root: the folder whose layout is NeMo-RL's checkout (default: the NeMo-RL checkout the command runs in, the nearest ancestor of the working directory holding examples/configs/, when it holds the recipe; else the recipe's nearest ancestor folder holding examples/configs/ (a NeMo-RL submodule, the repository's recipes/); never looked for under --root); --config is pointed at the recipe's path below it, under launch.recipeRoot (default codePath) in the pod")
	c.Flags().StringVar(&f.root, "root", "", "read input files only inside this directory (regular files; symlinks must resolve inside it; in a git work tree only tracked files; ${oc.env:...} reads no environment); default: no restriction")
	c.Flags().BoolVar(&f.untracked, "include-untracked", false, "with --root in a git work tree: also read files git does not track")
	c.Flags().StringVar(&f.mode, "mode", string(runparams.RayJob), "rayjob | raycluster | dev")
	modes := make([]string, len(runparams.Modes))
	for i, m := range runparams.Modes {
		modes[i] = string(m)
	}
	completeValues(c, "mode", modes...)
}

// request builds the pipeline request from args (RECIPE, then overrides).
func (f *runFlags) request(args []string) (pipeline.Request, error) {
	if len(args) == 0 {
		return pipeline.Request{}, usageError{errors.New("missing RECIPE argument")}
	}
	mode := runparams.Mode(f.mode)
	if !mode.Valid() {
		return pipeline.Request{}, usageError{fmt.Errorf("--mode %q: expected rayjob, raycluster or dev", f.mode)}
	}
	u, err := runparams.ResolveUser(f.user, os.Getenv, runparams.OSUser)
	if err != nil {
		return pipeline.Request{}, usageError{err}
	}
	labels, err := runparams.KeyValues("--label", f.labels)
	if err != nil {
		return pipeline.Request{}, usageError{err}
	}
	annos, err := runparams.KeyValues("--annotation", f.annos)
	if err != nil {
		return pipeline.Request{}, usageError{err}
	}
	return pipeline.Request{
		Recipe:       cleanPath(args[0]),
		Profile:      cleanPath(f.infra),
		UserDefaults: cleanPath(f.defaults),
		RecipeRoot:   cleanPath(f.recipeRoot),
		Namespace:    f.namespace,
		Overrides:    args[1:],
		Env:          os.LookupEnv,
		Run: runparams.Run{
			Mode:            mode,
			RunID:           f.runID,
			User:            u,
			Name:            f.name,
			Labels:          labels,
			Annotations:     annos,
			Image:           f.image,
			NoDeployments:   f.noDeploy,
			OnlyDeployments: f.onlyDeploy,
			State:           runparams.State(f.state),
		},
	}, nil
}

// run renders the request built from args with the disk as source.
func (f *runFlags) run(args []string, adjust func(*pipeline.Request)) (*pipeline.Result, error) {
	req, err := f.request(args)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(&req)
	}
	if f.root == "" && req.RecipeRoot == "" {
		req.Checkout = findCheckout(req.Recipe)
	}
	disk := source.Disk{}
	if f.root != "" {
		if disk, err = source.ConfineRepo(f.root, f.untracked); err != nil {
			return nil, usageError{fmt.Errorf("--root: %w", err)}
		}
		// --root is CI mode (docs/reliability.md): the inputs are a pull
		// request's, so ${oc.env:...} must not read the runner's
		// environment (its secrets). It sees an empty one.
		req.Env = nil
	}
	return pipeline.Render(recipe.NewLoader(disk), req), nil
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.ToSlash(filepath.Clean(p))
}
