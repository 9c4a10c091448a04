// Package buildinfo is what `nrl-k8s version` reports: the version set at
// link time, the commit Go stamps into a binary built from a git checkout,
// the Go version and the platform.
package buildinfo

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"sigs.k8s.io/yaml"
)

// Info is the report.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Read is this binary's Info, with version as the link-time version.
func Read(version string) Info {
	bi := Info{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				bi.GitCommit = s.Value
			}
		}
	}
	return bi
}

// String is the one-line form.
func (i Info) String() string {
	commit := i.GitCommit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("nrl-k8s %s (commit %s, %s, %s)", i.Version, commit, i.GoVersion, i.Platform)
}

// Encode writes i as json (indented, with a final newline) or yaml.
func (i Info) Encode(format string) ([]byte, error) {
	switch format {
	case "json":
		b, err := json.MarshalIndent(i, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	case "yaml":
		return yaml.Marshal(i)
	}
	return nil, fmt.Errorf("-o %s: expected json or yaml", format)
}
