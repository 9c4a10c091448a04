package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
)

func chartDataCmd() *cobra.Command {
	var o chartgen.DataOptions
	c := &cobra.Command{
		Use:   "chart-data --chart charts/nemo-rl-run [--index profiles/index.yaml]",
		Short: "Regenerate the Helm chart's packaged profile data from the Go engine",
		Long: `Render every profile listed in the index through the pipeline with sentinel
run parameters and write what the chart carries: files/rendered/*.json,
files/profiles.json, values.schema.json (the profile enum and the rules per
profile and mode read off the data) and the README's
profile table. The chart substitutes the sentinels and calls toYaml, so
helm template prints what nrl-k8s render prints. --check writes nothing
and fails when the committed files are stale. Paths are relative to the
working directory (run it from the repository root).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Stderr = cmd.ErrOrStderr()
			return chartgen.Data(o)
		},
	}
	c.Flags().StringVar(&o.Chart, "chart", "charts/nemo-rl-run", "chart directory")
	c.Flags().StringVar(&o.Index, "index", "profiles/index.yaml", "profile index")
	c.Flags().BoolVar(&o.Check, "check", false, "only report stale files")
	return c
}

func chartPackageCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "chart-package CHART_DIR [-d DIR]",
		Short: "Package a chart as helm package does, byte for byte reproducibly",
		Long: `Write DIR/<name>-<version>.tgz with helm package's layout, but with every
timestamp fixed (helm v3 stamps each tar entry with the current time, so two
helm package runs of the same chart differ). Helm loads and installs it as
any packaged chart. The archive file's modification time is set to the
same fixed time (the Unix epoch): helm push stamps the OCI manifest's
created annotation from it, so the pushed digest is reproducible too, as
long as the file pushed is the one written (a copy made without keeping
its mtime gets another digest). Prints the archive's path and sha256.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, sum, err := chartgen.Package(args[0], out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s sha256:%s\n", file, sum)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "destination", "d", ".", "directory to write the archive to")
	return c
}

func chartNewCmd() *cobra.Command {
	var index, out string
	var m chartgen.ChartMeta
	c := &cobra.Command{
		Use:   "chart-new --index INDEX --out DIR [--name NAME] [--version VERSION] [--description D] [--home URL] [--source URL]... [--app-version V] [--namespaces NS,...]",
		Short: "Write a Helm chart for your own profiles (one release per run)",
		Long: `Write a complete chart to DIR for the profiles listed in INDEX (the format
of profiles/index.yaml: name, description, profile, recipe; paths relative
to INDEX; an optional top-level namespaces: list, or --namespaces, binds
the chart to those namespaces): the templates of charts/nemo-rl-run, built into this binary, and
the data rendered from your profiles, its schema and its README table. Helm
then needs no nrl-k8s: package it (helm package DIR, or nrl-k8s
chart-package DIR for a reproducible archive) and push it to an OCI
registry (helm push). Re-run it into a fresh directory after a profile or
nrl-k8s changes. Paths recorded in the chart (README, NOTES) are as INDEX
writes them, relative to INDEX, so the chart and its chart-package digest do
not depend on the directory or machine it is made on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out: expected the directory to write the chart to")}
			}
			idx, err := chartgen.LoadIndex(filepath.ToSlash(index))
			if err != nil {
				return err
			}
			// Written inside the working tree it is run in (the git work
			// tree holding ., else .), as render-all writes manifests/.
			m.Root = renderall.RepoRoot(".")
			if err := chartgen.NewChart(idx, out, m); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote chart %s %s (%d profile(s)) to %s\n", m.Name, m.Version, len(idx.Profiles), out)
			return nil
		},
	}
	c.Flags().StringVar(&index, "index", "profiles/index.yaml", "profile index (name, description, profile, recipe per entry)")
	c.Flags().StringVarP(&out, "out", "o", "", "directory to write the chart to (new or empty)")
	c.Flags().StringVar(&m.Name, "name", "nemo-rl-run", "chart name (also the prefix of its error messages)")
	c.Flags().StringVar(&m.Version, "version", "0.1.0", "chart version (SemVer)")
	c.Flags().StringVar(&m.Description, "description", "", "Chart.yaml description (also the README's first paragraph)")
	c.Flags().StringVar(&m.Home, "home", "", "Chart.yaml home (default: nemo-rl-krm's)")
	c.Flags().StringArrayVar(&m.Sources, "source", nil, "Chart.yaml sources entry (repeatable; default: nemo-rl-krm's)")
	c.Flags().StringVar(&m.TestImage, "test-image", "", "the helm test hook's nrl-k8s image, test.image (default: "+chartgen.DefaultTestImage+", this version's)")
	c.Flags().StringSliceVar(&m.Namespaces, "namespaces", nil, "bind the chart to these namespaces (comma-separated; replaces the index's namespaces:): helm install into any other is refused by the chart")
	c.Flags().StringVar(&m.AppVersion, "app-version", "", "Chart.yaml appVersion (default: the embedded chart's); the app.kubernetes.io/version label")
	return c
}

// recipeMergeCmd prints the text the chart's `recipe` value takes: the
// chart cannot read a defaults: chain's files, so it is given the merged
// recipe, written as a run with launch.recipeSource: configMap ships it
// (manifest.RecipeYAML), and the ConfigMap the chart installs then holds
// the same bytes nrl-k8s render would put there.
func recipeMergeCmd() *cobra.Command {
	var root string
	c := &cobra.Command{
		Use:   "recipe-merge RECIPE [--root DIR]",
		Short: "Print a recipe merged with its defaults: chain (for the Helm chart's recipe value)",
		Long: `Print RECIPE merged with its defaults: chain, sorted keys, interpolations left
for the driver, exactly as a run with launch.recipeSource: configMap ships it
in its ConfigMap. The Helm chart's recipe value takes this text
(helm install ... --set-file recipe=merged.yaml) and ships it the same way.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			y, err := chartgen.MergedRecipe(root, filepath.ToSlash(args[0]))
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), y)
			return err
		},
	}
	c.Flags().StringVar(&root, "root", "", "read inputs only inside DIR")
	return c
}
