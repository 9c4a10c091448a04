package chartgen

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/charts"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// ChartMeta is what a team's chart says about itself (Chart.yaml); empty
// fields keep the embedded chart's, except Description, which defaults to
// one naming the chart's profiles' purpose without upstream's wording.
type ChartMeta struct {
	Name, Version, Description, Home, AppVersion string
	Sources                                      []string
	// TestImage is the helm test hook's nrl-k8s image (test.image); ""
	// keeps the embedded chart's, the image of this nrl-k8s version.
	TestImage string
	// Env is what ${oc.env:...} reads; nil: the process environment.
	Env func(string) (string, bool)
	// Namespaces, when set, bind the chart to them (replacing the index's
	// namespaces): helm install elsewhere is refused by the chart.
	Namespaces []string
	// Root, when set, is the working tree the chart must be written
	// inside: an output that resolves outside it, or reaches it through a
	// symlink, is refused, and no file is written through a link.
	Root string
}

// NewChart writes a complete chart to dir for the profiles of idx: the
// hand-written templates of charts/nemo-rl-run (embedded in the binary),
// with Chart.yaml from m, error messages prefixed with the chart's name,
// a README and values example of its own, plus everything Generate makes.
// A platform team packages its own profiles this way without forking; the
// result is ready for `helm package` (or chart-package) and `helm push`.
// dir must not exist or be empty, so nothing of the team's is overwritten.
func NewChart(idx *Index, dir string, m ChartMeta) error {
	name := m.Name
	if !chartNameRE().MatchString(name) {
		return fmt.Errorf("chart name %q: expected lower case letters, digits and '-' (Helm's chart name convention)", name)
	}
	out := source.Disk{}
	if m.Root != "" {
		var err error
		if out, err = source.Confine(m.Root); err != nil {
			return err
		}
		if err := out.CheckDir(dir); err != nil {
			return fmt.Errorf("--out %w (the working tree %s; chart-new writes only inside it, never through a link)", err, m.Root)
		}
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s: exists and is not empty; expected a new directory", dir)
	}
	files, err := skeletonFiles()
	if err != nil {
		return err
	}
	meta, err := chartMetadata(files["Chart.yaml"], m)
	if err != nil {
		return err
	}
	if files["Chart.yaml"], err = yaml.Marshal(meta); err != nil {
		return err
	}
	// Errors and NOTES speak for the team's chart, not upstream's.
	for _, f := range sortedPaths(files) {
		if strings.HasPrefix(f, "templates/") {
			files[f] = []byte(strings.ReplaceAll(string(files[f]), SkeletonErrorPrefix, name+": "))
		}
	}
	if m.TestImage != "" {
		if !imageRE().MatchString(m.TestImage) {
			return fmt.Errorf("test image %q: expected an image reference (name:tag or name@sha256:digest)", m.TestImage)
		}
		v := string(files["values.yaml"])
		if !strings.Contains(v, testImageLine) {
			return fmt.Errorf("embedded values.yaml: expected the line %q", strings.TrimSpace(testImageLine))
		}
		files["values.yaml"] = []byte(strings.Replace(v, testImageLine, "  image: "+m.TestImage+"\n", 1))
	}
	first := idx.Profiles[0].Name
	files["values.yaml"] = []byte(strings.Replace(string(files["values.yaml"]), "e.g. "+SkeletonExampleProfile, "e.g. "+first, 1))
	files["values.yaml"] = []byte(strings.Replace(string(files["values.yaml"]), "# nemo-rl-run: one training run", "# "+name+": one training run", 1))
	// ${oc.env:VAR,default} resolves as nrl-k8s render resolves it, in the
	// environment chart-new runs in (the chart has none at install time).
	env := m.Env
	if env == nil {
		env = os.LookupEnv
	}
	// The chart records each profile and recipe as the index names them,
	// relative to the index: the same chart whatever directory (or
	// checkout path) it is made from.
	for i, e := range idx.Profiles {
		for _, f := range [][2]string{{"profile", e.InIndex.Profile}, {"recipe", e.InIndex.Recipe}} {
			if path.IsAbs(f[1]) || filepath.IsAbs(f[1]) {
				return fmt.Errorf("index profiles[%d].%s: %q is absolute; expected a path relative to the index file (the chart records it, and must not depend on the machine it was made on)", i, f[0], f[1])
			}
		}
	}
	if m.Namespaces != nil {
		if err := CheckNamespaces(m.Namespaces); err != nil {
			return fmt.Errorf("--namespaces%w", err)
		}
		bound := *idx
		bound.Namespaces = m.Namespaces
		idx = &bound
	}
	generated, err := generate(idx, teamReadme(meta, first, idx.Namespaces), env, true)
	if err != nil {
		return err
	}
	for k, v := range generated {
		files[k] = v
	}
	for _, rel := range sortedPaths(files) {
		// source.Disk.WriteFile: directories created, no link followed.
		if err := out.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), files[rel]); err != nil {
			return err
		}
	}
	return nil
}

// skeletonFiles are the embedded chart's files (charts/nemo-rl-run's
// templates and static files), by slash path.
func skeletonFiles() (map[string][]byte, error) {
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
	return files, err
}

// chartMetadata is the embedded Chart.yaml with the team chart's name,
// version and the metadata it gives, validated as Helm validates it.
func chartMetadata(embedded []byte, m ChartMeta) (*chart.Metadata, error) {
	var meta chart.Metadata
	if err := yaml.Unmarshal(embedded, &meta); err != nil {
		return nil, fmt.Errorf("embedded Chart.yaml: %w", err)
	}
	meta.Name, meta.Version = m.Name, m.Version
	meta.Description = m.Description
	if meta.Description == "" {
		meta.Description = "One NeMo-RL training run on KubeRay per Helm release, for the profiles of " + m.Name + "."
	}
	if m.Home != "" {
		meta.Home = m.Home
	}
	if m.Sources != nil {
		meta.Sources = m.Sources
	}
	if m.AppVersion != "" {
		meta.AppVersion = m.AppVersion
	}
	if err := meta.Validate(); err != nil {
		return nil, fmt.Errorf("chart metadata (Chart.yaml): %w", err)
	}
	return &meta, nil
}

// SkeletonErrorPrefix starts every message the embedded templates fail
// with; SkeletonExampleProfile is the profile values.yaml names as example.
const (
	SkeletonErrorPrefix    = "nemo-rl-run: "
	SkeletonExampleProfile = "gb300-qwen3-30b-math-4n-4gpu"
)

// teamReadme is a team chart's README: its own title, description and
// install example, the values it takes, and the generated profile table;
// no links to files of the nemo-rl-krm repository (a team chart does not
// ship them), only Chart.yaml's home (the embedded one unless the team
// gives its own).
func teamReadme(meta *chart.Metadata, profile string, namespaces []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", meta.Name, meta.Description)
	b.WriteString("One release is one training run: the release name is the run name and names\nevery object of the run. Plain Helm 3.21+ or 4.x.\n\n")
	fmt.Fprintf(&b, "```sh\nhelm install exp-1 oci://REGISTRY/%s --version %s -n NAMESPACE \\\n  --set profile=%s --set user=YOU\nhelm uninstall exp-1 -n NAMESPACE\n```\n\n", meta.Name, meta.Version, profile)
	b.WriteString("Values: `profile` and `user` (required), `mode` (rayjob | raycluster | dev), `state` (run | stopped, as nrl-k8s render --state), `namespace`, `runId`,\n`overrides` (Hydra overrides, use `-f` or `--set-json`), `recipe` (a merged recipe the run ships,\nrayjob mode), `image`, `labels`, `annotations`, `deployments`; per run, as the profile keys they stand for\n(the engine applies them, the chart substitutes): `queue` (KAI or Kueue), `kueueQueue` (Kueue's LocalQueue where KAI places), `workloadPriorityClass` (Kueue), `priorityClassName` and `env` (Ray pods),\n`nodeSelector` and `tolerations` (added to the GPU workers' placement), `suspend` and `ttlSecondsAfterFinished`\n(the RayJob, rayjob mode). `values.schema.json` says what each accepts; a value a profile has nothing to apply to is refused.\n\n")
	b.WriteString("`helm test`: install with `--set test.enabled=true`, then `helm test exp-1 -n NAMESPACE --logs`: a Pod in the\n`test.image` image (nrl-k8s) runs `nrl-k8s status exp-1` with a read-only Role; it passes while the run is\nrunning, succeeded, progressing or suspended, and fails when it is stuck, failed or not found. Off by default:\n`helm template` prints hooks as plain objects (use `--skip-tests` with it on).\n\n")
	if len(namespaces) > 0 {
		fmt.Fprintf(&b, "The chart is bound to the namespace(s) %s: a release in another namespace, or a `namespace` value naming one, is refused.\n\n", "`"+strings.Join(namespaces, "`, `")+"`")
	}
	b.WriteString("A change to a run is a new run: install it under a new release name (`helm upgrade` fails while the run's RayJob or RayClusters exist).\n\n")
	if meta.Home != "" {
		fmt.Fprintf(&b, "Home: %s\n\n", meta.Home)
	}
	b.WriteString("## Profiles\n\n" + readmeBegin + "\n" + readmeEnd + "\n")
	return []byte(b.String())
}

// testImageLine is the test.image default in the embedded values.yaml.
const testImageLine = "  image: " + DefaultTestImage + "\n"

// DefaultTestImage is the embedded chart's test.image: the image `make
// image` builds of this version (the Makefile's IMAGE).
const DefaultTestImage = "ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"

var imageRE = lazyre.New(ImagePattern)

var chartNameRE = lazyre.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func sortedPaths(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, path.Clean(k))
	}
	sort.Strings(out)
	return out
}
