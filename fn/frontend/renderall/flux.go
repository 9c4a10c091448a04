package renderall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// A runs repository's Flux objects (render-all --flux SOURCE;
// docs/gitops.md, "Flux, kustomize"): per run, the folder its Flux
// Kustomization builds and the Kustomization itself, in a folder of their
// own that one parent Kustomization (written once, by hand) applies. Not
// below FluxDir: kustomize-controller's build of a folder without a
// kustomization.yaml takes in every subfolder that has one, so a parent on
// it would apply the runs' objects itself.
const (
	// FluxDir holds flux/<run>/kustomization.yaml: the run's manifest, or
	// nothing once the run is removed.
	FluxDir = "flux"
	// FluxRunsDir holds flux-runs/<run>.yaml: the run's Kustomization.
	FluxRunsDir = "flux-runs"
	// FluxWorkersDir holds flux-workers/<run>.yaml for a run MultiKueue
	// dispatches: the Kustomization of its worker bundle
	// (flux/<run>/workers/), which every worker's own Flux applies from a
	// parent on this folder, while the manager's parent is on FluxRunsDir.
	FluxWorkersDir = "flux-workers"
	// DefaultFluxNamespace and DefaultFluxInterval are the shipped
	// Kustomization's (gitops/flux/kustomization.yaml).
	DefaultFluxNamespace = "flux-system"
	DefaultFluxInterval  = "10m"
	// fluxMark opens every Flux file render-all writes: only such a file
	// is ever deleted (a run gone from the repository); any other file
	// below fluxDirs is a stray.
	fluxMark = "# Written by nrl-k8s render-all --flux"
)

// fluxDirs are the folders render-all keeps with --flux: what it reads
// back, checks and names in its messages.
var fluxDirs = []string{FluxDir, FluxRunsDir, FluxWorkersDir}

// Flux is what --flux and its companions ask for; generation is off when
// Source is "".
type Flux struct {
	// Source is the GitRepository the Kustomizations read (spec.sourceRef).
	Source string
	// Namespace and Interval are the Kustomizations' own.
	Namespace, Interval string
	// RepoPath is the runs repository's folder relative to the Git
	// repository's root ("." at the top): spec.path is relative to the
	// source's root.
	RepoPath string
}

// On says the runs repository's Flux objects are generated.
func (f Flux) On() bool { return f.Source != "" }

// intervalPattern is Flux's CRD pattern for spec.interval.
var intervalPattern = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

// check refuses values that are not what Flux's CRD accepts; each is
// written into YAML unquoted, which these patterns make safe.
func (f Flux) check() error {
	if errs := validation.IsDNS1123Subdomain(f.Source); len(errs) > 0 {
		return fmt.Errorf("--flux %q: %s; expected the name of the GitRepository the runs repository is in", f.Source, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(f.Namespace); len(errs) > 0 {
		return fmt.Errorf("--flux-namespace %q: %s; expected the namespace of the Kustomizations (and of the GitRepository)", f.Namespace, strings.Join(errs, "; "))
	}
	if !intervalPattern.MatchString(f.Interval) {
		return fmt.Errorf("--flux-interval %q: expected a duration as Flux spells it (10m, 1h, 90s)", f.Interval)
	}
	return nil
}

// ObjectRef is an object a Kustomization health-checks.
type ObjectRef struct{ APIVersion, Kind, Namespace, Name string }

// KustomizationSpec is what varies between runs' Kustomizations.
type KustomizationSpec struct {
	Run, Namespace, Interval, Source, Path string
	// HealthChecks are the run's RayJobs and RayClusters as its render
	// holds them (none for a removed run, or a stopped Kueue run, whose
	// render leaves its RayJob out: a check of an absent object would
	// never pass).
	HealthChecks []ObjectRef
	// Workers: the Kustomization of a dispatched run's worker bundle.
	Workers bool
}

// FluxKustomization is a run's Flux Kustomization: kustomizationBody's
// settings with the run's fields filled in. Every field is a name, a path
// of names or a duration (Flux.check, runspec.ValidateName), so none
// needs quoting.
func FluxKustomization(k KustomizationSpec) []byte {
	var hc strings.Builder
	if len(k.HealthChecks) > 0 {
		hc.WriteString("  healthChecks:\n")
		for _, r := range k.HealthChecks {
			fmt.Fprintf(&hc, "  - {apiVersion: %s, kind: %s, name: %s, namespace: %s}\n", r.APIVersion, r.Kind, r.Name, r.Namespace)
		}
	}
	header := fluxMark + `: one run, one Flux
# Kustomization (docs/gitops.md, "Flux, kustomize"), so a refused apply (a
# running Kueue run moved to another LocalQueue) blocks that run alone. Its
# path holds one kustomization.yaml: the run's manifest, or nothing once the
# run is state: removed. Not edited by hand: render-all rewrites it.
`
	if k.Workers {
		header = fluxMark + `: the worker bundle of a
# run MultiKueue dispatches, applied by every worker's Flux (docs/multicluster.md,
# "Delivery"). Its path holds one kustomization.yaml: the bundle, or nothing
# once the run is state: removed. Not edited by hand: render-all rewrites it.
`
	}
	body := strings.NewReplacer("{{run}}", k.Run, "{{namespace}}", k.Namespace, "{{interval}}", k.Interval,
		"{{source}}", k.Source, "{{path}}", k.Path, "{{healthChecks}}", hc.String()).Replace(kustomizationBody)
	return []byte(header + body)
}

// ShippedKustomizationFile is the shipped example of a run's
// Kustomization: FluxKustomization for ShippedKustomization's run, byte
// for byte (tested), so the example and what render-all writes are one.
const ShippedKustomizationFile = "gitops/flux/kustomization.yaml"

// ShippedKustomization is what ShippedKustomizationFile holds: run exp-7
// of team-a's runs repository (GitRepository team-a-runs) at its top, a
// RayJob in namespace team-a, with the default namespace and interval.
func ShippedKustomization() []byte {
	return FluxKustomization(KustomizationSpec{
		Run: "exp-7", Namespace: DefaultFluxNamespace, Interval: DefaultFluxInterval, Source: "team-a-runs",
		Path:         "./" + path.Join(FluxDir, "exp-7"),
		HealthChecks: []ObjectRef{{APIVersion: vocab.RayAPIVersion, Kind: "RayJob", Namespace: "team-a", Name: "exp-7"}},
	})
}

// FluxBuild is flux/<run>/kustomization.yaml: the run's manifest, or
// nothing when the run is removed, so its Kustomization prunes every
// object it applied. kustomize-controller builds without kustomize's load
// restrictions, so the file may reach manifests/.
func FluxBuild(run string, removed bool) []byte {
	if removed {
		return fluxBuild(run, "", "# The run is state: removed: its Kustomization prunes every object of it.",
			"# Delete runs/"+run+"/ in a later commit, once Flux has applied this one.")
	}
	return fluxBuild(run, "../../"+ManifestsDir+"/"+run+Ext)
}

// FluxWorkersBuild is flux/<run>/workers/kustomization.yaml: the run's
// worker bundle, or nothing when it has none (removed, or no longer
// dispatched), so every worker's Kustomization prunes it.
func FluxWorkersBuild(run string, bundle bool) []byte {
	if !bundle {
		return fluxBuild(run, "", "# The run has no worker bundle (state: removed, or not dispatched by MultiKueue):",
			"# every worker's Kustomization prunes what it applied.")
	}
	return fluxBuild(run, "../../../"+ManifestsDir+"/"+WorkersDir+"/"+run+Ext)
}

// fluxBuild is a kustomization.yaml listing resource ("": nothing), its
// header saying why with notes.
func fluxBuild(run, resource string, notes ...string) []byte {
	var b strings.Builder
	b.WriteString(fluxMark + ": what run " + run + "'s Flux\n")
	b.WriteString("# Kustomization applies. Not edited by hand: render-all rewrites it.\n")
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	if resource == "" {
		b.WriteString("resources: []\n")
	} else {
		b.WriteString("resources:\n- " + resource + "\n")
	}
	return []byte(b.String())
}

// fluxPaths are a run's two Flux files, relative to the runs repository.
func fluxPaths(run string) (build, kustomization string) {
	return path.Join(FluxDir, run, KustomizationFile), path.Join(FluxRunsDir, run+Ext)
}

// fluxWorkerPaths are the two Flux files of a run's worker bundle.
func fluxWorkerPaths(run string) (build, kustomization string) {
	return path.Join(FluxDir, run, WorkersDir, KustomizationFile), path.Join(FluxWorkersDir, run+Ext)
}

// Files are the Flux files of every run that rendered or is removed,
// keyed by path relative to the runs repository. A failed run has none:
// its committed files are kept, as its manifest is. A run MultiKueue
// dispatches also has its worker bundle's; once it has no bundle (removed,
// or no longer dispatched) they stay, with an empty build, while committed
// (committed: the Flux files as ReadFlux reads them), so the workers prune
// it; they go with the run.
func (f Flux) Files(res *Result, committed map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for _, run := range res.Runs {
		data, rendered := res.Files[run]
		if !rendered && !res.Removed[run] {
			continue
		}
		build, ks := fluxPaths(run)
		out[build] = FluxBuild(run, res.Removed[run])
		if rendered && len(data) == 0 {
			out[build] = fluxBuild(run, "", "# MultiKueue dispatches the run and it is stopped: the manager holds none of",
				"# its objects (its RayJob pruned stops it on its worker).")
		}
		out[ks] = FluxKustomization(KustomizationSpec{
			Run: run, Namespace: f.Namespace, Interval: f.Interval, Source: f.Source,
			Path: "./" + path.Join(f.RepoPath, FluxDir, run), HealthChecks: rayRefs(data),
		})
		wbuild, wks := fluxWorkerPaths(run)
		_, bundle := res.Workers[run]
		if _, had := committed[wks]; !bundle && !had {
			continue
		}
		out[wbuild] = FluxWorkersBuild(run, bundle)
		out[wks] = FluxKustomization(KustomizationSpec{
			Run: run, Namespace: f.Namespace, Interval: f.Interval, Source: f.Source,
			Path: "./" + path.Join(f.RepoPath, FluxDir, run, WorkersDir), Workers: true,
		})
	}
	return out
}

// rayRefs are the RayJobs and RayClusters of a render, in its order.
func rayRefs(data []byte) []ObjectRef {
	var out []ObjectRef
	for _, doc := range headers(data) {
		if strings.HasPrefix(doc.APIVersion, vocab.RayGroup+"/") && (doc.Kind == "RayJob" || doc.Kind == "RayCluster") {
			out = append(out, ObjectRef{APIVersion: doc.APIVersion, Kind: doc.Kind, Namespace: doc.Metadata.Namespace, Name: doc.Metadata.Name})
		}
	}
	return out
}

// fluxRun is the run a Flux file belongs to: flux/<run>/kustomization.yaml,
// flux/<run>/workers/kustomization.yaml, flux-runs/<run>.yaml or
// flux-workers/<run>.yaml; "" for any other path.
func fluxRun(rel string) string {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) == 3 && parts[0] == FluxDir && parts[2] == KustomizationFile,
		len(parts) == 4 && parts[0] == FluxDir && parts[2] == WorkersDir && parts[3] == KustomizationFile:
		return parts[1]
	case len(parts) == 2 && (parts[0] == FluxRunsDir || parts[0] == FluxWorkersDir) && IsManifestName(parts[1]):
		return strings.TrimSuffix(parts[1], Ext)
	}
	return ""
}

// CompareFlux lists the Flux files that differ from what render-all
// writes (display paths below shown, the runs repository as diff headers
// show it), and the strays: committed files below fluxDirs render-all
// would not write and did not write (no fluxMark), which a parent
// Kustomization (or a run's build) would apply unreviewed. A failed
// run's files are kept, neither stale nor orphaned.
func (f Flux) CompareFlux(shown string, committed map[string][]byte, res *Result) (drift []Drift, strays []string) {
	want := f.Files(res, committed)
	failed := map[string]bool{}
	for _, n := range res.Failed() {
		failed[n] = true
	}
	for _, rel := range unionKeys(want, committed) {
		file := path.Join(shown, rel)
		run := fluxRun(rel)
		old, hasOld := committed[rel]
		cur, hasNew := want[rel]
		switch {
		case hasOld && hasNew:
			if !bytes.Equal(old, cur) {
				drift = append(drift, Drift{Run: run, Change: Stale, File: file, Data: cur, Diff: UnifiedDiff("a/"+file, "b/"+file, old, cur)})
			}
		case hasNew:
			drift = append(drift, Drift{Run: run, Change: Missing, File: file, Data: cur, Diff: UnifiedDiff("/dev/null", "b/"+file, nil, cur)})
		case run != "" && failed[run]:
		case run != "" && bytes.HasPrefix(old, []byte(fluxMark)):
			drift = append(drift, Drift{Run: run, Change: Orphan, File: file, Diff: UnifiedDiff("a/"+file, "/dev/null", old, nil)})
		default:
			strays = append(strays, rel)
		}
	}
	return drift, strays
}

func unionKeys(a, b map[string][]byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string][]byte{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Unremoved are the runs the base branch holds a Flux folder for whose
// run file the pull request deletes while the base's build still lists
// the run's manifest: deleting the file deletes the run's Kustomization,
// which orphans every object of the run (deletionPolicy: Orphan), so a
// running run would run on with nothing in Git owning it. Only a run
// whose base state is removed (an empty build) may go. A build that does
// not parse counts as not removed.
func Unremoved(base Base, res *Result) ([]string, error) {
	known := map[string]bool{}
	for _, n := range res.Runs {
		known[n] = true
	}
	var out []string
	for _, run := range base.FluxRuns {
		if known[run] || base.FluxBuild == nil {
			continue
		}
		// The manager's build, and the workers' of a dispatched run (a
		// stopped one's manager build is empty, its bundle is not).
		for _, file := range []string{path.Join(run, KustomizationFile), path.Join(run, WorkersDir, KustomizationFile)} {
			data, err := base.FluxBuild(file)
			if err != nil {
				return nil, err
			}
			if data != nil && !emptyBuild(data) {
				out = append(out, run)
				break
			}
		}
	}
	return out, nil
}

// emptyBuild: a kustomization.yaml whose resources list is empty.
func emptyBuild(data []byte) bool {
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return len(k.Resources) == 0
}

// UnremovedRefusal is the gate's message for a run Unremoved names.
func UnremovedRefusal(run string) string {
	return fmt.Sprintf("%s/%s/%s is deleted, but on the base branch the run is not state: %s (%s/%s/%s lists its manifest): "+
		"deleting the file deletes its Flux Kustomization, which leaves every object of the run in the cluster, running "+
		"(deletionPolicy: Orphan); set spec.state: %s instead (its Kustomization then prunes every object of the run), "+
		"and delete the run file in a later pull request, once Flux has applied that one",
		RunsDir, run, RunFile, runspec.Removed, FluxDir, run, KustomizationFile, runspec.Removed)
}
