package cli

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

func renderAllCmd() *cobra.Command {
	var f renderall.Flags
	c := &cobra.Command{
		Use:   "render-all [DIR] [--out DIR] [--root DIR] [--kustomization] [--flux SOURCE [--flux-namespace NS] [--flux-interval D]] [--check [--base-ref REF | --base DIR]]",
		Short: "Render every run of a runs repository into its committed manifests tree",
		Long: `Render every DIR/runs/<run>/run.yaml (a NemoRLRun) into DIR/manifests/<run>.yaml,
one file per run holding exactly what 'nrl-k8s render' prints for it. Files
are written only when their content changes; a manifest whose run no longer
exists is removed when render-all wrote it (every object labelled
app.kubernetes.io/managed-by: nrl-k8s), and left alone otherwise. A run that
fails renders nothing, keeps its committed file and makes the command exit 1;
the other runs still render.

A runs repository is untrusted input on a pull request: every file a run
names (recipe, profile, defaults, their defaults: chains) must be a regular
file inside the root, the git work tree holding DIR unless --root says
otherwise; symlinks are resolved and must stay inside it. A symlinked output
directory or output file is refused, never followed (docs/reliability.md).

--check writes nothing: it prints a unified diff of every stale, missing or
orphaned manifest, says what render-all would write or remove, and exits 1
if there is any, so CI can block a pull request whose manifests were not
regenerated. It also fails on any other *.yaml, *.yml or *.json file in
OUT that no run renders (kubectl apply -f OUT/ would apply it), but for
the kustomization render-all maintains. It then runs the security gate against the base branch: the
manifests and review-allow.yaml of --base-ref REF read from git objects
at REF's tip (never an older merge-base: the base as it is today), or of the checkout --base DIR; without
either, the branch CI names (GITHUB_BASE_REF, GitLab's
CI_MERGE_REQUEST_TARGET_BRANCH_NAME: origin/<branch>), else the current
branch's upstream. With none it says so and judges against this checkout's
own committed manifests, which a pull request rewrites itself. Every run,
new and renamed ones included, fails the gate when its Pod Security level
rises, it enters a namespace or it gains a privilege the base branch's
review-allow.yaml does not permit.

--kustomization also keeps OUT/kustomization.yaml listing every run's
manifest, so an overlay naming OUT as its base takes a new run without a
hand edit; with --check a stale one is drift. Without it, a
kustomization.yaml there is the user's: left alone, and passes --check
while it holds only a Kustomization.

--flux SOURCE also keeps each run's Flux objects: DIR/flux/<run>/kustomization.yaml
(the run's manifest; nothing once the run file says state: removed) and the
run's Kustomization in DIR/flux-runs/<run>.yaml (the settings of
gitops/flux/kustomization.yaml, reading the GitRepository SOURCE), which one
parent Kustomization on DIR/flux-runs applies. A run MultiKueue dispatches
also gets DIR/flux/<run>/workers/kustomization.yaml (its worker bundle) and
DIR/flux-workers/<run>.yaml, applied by each worker's own Flux (docs/
multicluster.md). A run is taken out in two
pull requests: state: removed (its Kustomization prunes every object), then
the run file deleted; --check refuses deleting a run file whose state on
the base branch is not removed, since the Kustomization orphans the run's
objects when it goes.

Paths in a run file (spec.recipe, spec.profile, spec.defaults,
spec.recipeRoot) are relative to the run file's directory, as they are for
kustomize-inputs and the KRM function. Files of a checked-out git submodule
count as tracked (NeMo-RL pinned as a submodule); one not checked out is an
error saying so. --recipe-root DIR is the recipe root of every run whose
spec.recipeRoot is empty: the folder whose layout is NeMo-RL's checkout
(the submodule), so --config points at the recipe's path below it in the
pod (nrl-k8s render --recipe-root). It must be inside the root.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Dir = "."
			if len(args) == 1 {
				f.Dir = args[0]
			}
			f.BaseDirSet, f.BaseRefSet = cmd.Flags().Changed("base"), cmd.Flags().Changed("base-ref")
			o, err := f.Options()
			failed := false
			if err == nil {
				o.Gate, o.Getenv, o.Stdout, o.Stderr = review.SecurityGate, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()
				failed, err = renderall.Run(o)
			}
			if ue, ok := errors.AsType[renderall.UsageError](err); ok {
				return usageError{ue}
			}
			if err != nil {
				return err
			}
			if failed {
				return exitError{ExitError}
			}
			return nil
		},
	}
	c.Flags().StringVar(&f.Out, "out", "", "output directory (default DIR/manifests)")
	c.Flags().StringVar(&f.Root, "root", "", "read input files only inside this directory (default: the git work tree holding DIR, else DIR)")
	c.Flags().BoolVar(&f.Check, "check", false, "write nothing; print a diff and exit 1 when the output tree is stale")
	c.Flags().StringVar(&f.BaseDir, "base", "", "with --check: the runs repository of the base branch's checkout; the security gate judges against its committed manifests and allow-list")
	c.Flags().StringVar(&f.BaseRef, "base-ref", "", "with --check: the base branch (origin/main); the security gate judges against its manifests and allow-list at its tip, read from git objects (default: the branch CI names, else the upstream branch)")
	c.Flags().BoolVar(&f.Untracked, "include-untracked", false, "in a git work tree, also read files git does not track (by default only tracked files are read)")
	c.Flags().StringVar(&f.RecipeRoot, "recipe-root", "", "recipe root (NeMo-RL's layout, e.g. a submodule) of every run whose spec.recipeRoot is empty; inside the root")
	c.Flags().BoolVar(&f.Kustomization, "kustomization", false, "also maintain OUT/kustomization.yaml listing every run's manifest (an overlay's base); with --check, a stale one is drift")
	c.Flags().StringVar(&f.FluxSource, "flux", "", "also maintain each run's Flux objects, reading the GitRepository SOURCE: DIR/flux/<run>/kustomization.yaml and its Kustomization DIR/flux-runs/<run>.yaml (a dispatched run's worker bundle too: flux/<run>/workers/, flux-workers/<run>.yaml); with --check, drift, and deleting a run file whose state was not removed is refused (docs/gitops.md, \"Flux, kustomize\")")
	c.Flags().StringVar(&f.FluxNamespace, "flux-namespace", "", "with --flux: the Kustomizations' namespace (default "+renderall.DefaultFluxNamespace+")")
	c.Flags().StringVar(&f.FluxInterval, "flux-interval", "", "with --flux: the Kustomizations' spec.interval (default "+renderall.DefaultFluxInterval+")")
	return c
}
