package chartgen

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/charts"
)

// NewChart writes a complete chart to dir for the profiles of idx: the
// hand-written files of charts/nemo-rl-run (embedded in the binary), with
// Chart.yaml's name and version set, plus everything Generate makes. A
// platform team packages its own profiles this way without forking; the
// result is ready for `helm package` (or chart-package) and `helm push`.
// dir must not exist or be empty, so nothing of the team's is overwritten.
func NewChart(idx *Index, dir, name, version string) error {
	if !chartNameRE.MatchString(name) {
		return fmt.Errorf("chart name %q: expected lower case letters, digits and '-' (Helm's chart name convention)", name)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s: exists and is not empty; expected a new directory", dir)
	}
	files := map[string][]byte{}
	err := fs.WalkDir(charts.Skeleton, charts.SkeletonRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := charts.Skeleton.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(charts.SkeletonRoot, filepath.FromSlash(p))
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return err
	}
	var meta chart.Metadata
	if err := yaml.Unmarshal(files["Chart.yaml"], &meta); err != nil {
		return fmt.Errorf("embedded Chart.yaml: %w", err)
	}
	meta.Name, meta.Version = name, version
	if err := meta.Validate(); err != nil {
		return fmt.Errorf("chart metadata (Chart.yaml): %w", err)
	}
	if files["Chart.yaml"], err = yaml.Marshal(&meta); err != nil {
		return err
	}
	generated, err := Generate(idx, files["README.md"])
	if err != nil {
		return err
	}
	for k, v := range generated {
		files[k] = v
	}
	for _, rel := range sortedPaths(files) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return err
		}
	}
	return nil
}

var chartNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func sortedPaths(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, path.Clean(k))
	}
	sort.Strings(out)
	return out
}
