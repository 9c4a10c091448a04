package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// BuildInfo is what `nrl-k8s version` reports.
type BuildInfo struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// buildInfo reads the version set at link time (-X .../fn/frontend/cli.Version) and
// the commit Go stamps into binaries built from a git checkout.
func buildInfo() BuildInfo {
	bi := BuildInfo{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				bi.GitCommit = s.Value
			}
		}
	}
	return bi
}

func versionCmd() *cobra.Command {
	var short bool
	var format string
	c := &cobra.Command{
		Use:   "version [--short] [-o json|yaml]",
		Short: "Print the version of nrl-k8s",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := buildInfo()
			w := cmd.OutOrStdout()
			switch {
			case format == "json":
				b, err := json.MarshalIndent(bi, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", b)
				return err
			case format == "yaml":
				b, err := yaml.Marshal(bi)
				if err != nil {
					return err
				}
				_, err = w.Write(b)
				return err
			case format != "":
				return usageError{errors.New("-o " + format + ": expected json or yaml")}
			case short:
				_, err := fmt.Fprintln(w, bi.Version)
				return err
			}
			_, err := fmt.Fprintf(w, "nrl-k8s %s (commit %s, %s, %s)\n", bi.Version, orUnknown(bi.GitCommit), bi.GoVersion, bi.Platform)
			return err
		},
	}
	c.Flags().BoolVar(&short, "short", false, "print the version only")
	c.Flags().StringVarP(&format, "output", "o", "", "json or yaml")
	completeValues(c, "output", "json", "yaml")
	return c
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
