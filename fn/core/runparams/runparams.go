// Package runparams holds the run parameters every stage shares (mode, run
// id, user, run name and the rest the profile does not say): a leaf, so
// that the check stage needs nothing from the build stage that follows it.
package runparams

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strings"
)

// NormalizeUser is the one user-name rule (the run's user, `${user:}`):
// lower case, `_` and `.` become `-`, so the name is usable in Kubernetes
// object names. Every entry point applies it before a render.
func NormalizeUser(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	return strings.NewReplacer("_", "-", ".", "-").Replace(u)
}

// UserEnv names the submitting user of a command-line render when --user
// does not.
const UserEnv = "NRL_K8S_USER"

// ResolveUser is the submitting user of a command-line render: flag (--user),
// else getenv(UserEnv), else osUser (asked only then), normalised. None is an
// error saying how to give one.
func ResolveUser(flag string, getenv func(string) string, osUser func() string) (string, error) {
	u := flag
	if u == "" {
		u = getenv(UserEnv)
	}
	if u == "" {
		u = osUser()
	}
	u = NormalizeUser(u)
	if u == "" {
		return "", errors.New("no user: pass --user or set NRL_K8S_USER")
	}
	return u, nil
}

// OSUser is the name of the user the process runs as, "" when unknown.
func OSUser() string {
	if cu, err := user.Current(); err == nil {
		return cu.Username
	}
	return ""
}

// Mode is what a render produces.
type Mode string

const (
	// RayJob: one ephemeral RayJob (KubeRay creates and tears down the cluster).
	RayJob Mode = "rayjob"
	// RayCluster: long-lived RayClusters plus RayJobs submitted to them.
	RayCluster Mode = "raycluster"
	// Dev: the CPU-only dev pod.
	Dev Mode = "dev"
)

// Modes lists the valid modes.
var Modes = []Mode{RayJob, RayCluster, Dev}

// Valid says m is one of Modes.
func (m Mode) Valid() bool { return slices.Contains(Modes, m) }

// State is a run's declared life (docs/gitops.md, "A run's life in Git"):
// what Git says the run should be doing, so that a GitOps sync, which
// re-applies Git forever, can stop a run and never start it again.
type State string

const (
	// Running: the run is rendered to run (the default, "" too).
	Running State = "run"
	// Stopped: the run is rendered in the form no controller starts
	// (manifest.Stop): KubeRay suspends and deletes its cluster, and a
	// re-created object never runs.
	Stopped State = "stopped"
)

// States lists the valid states.
var States = []State{Running, Stopped}

// Valid says s is one of States, or "" (running).
func (s State) Valid() bool { return s == "" || slices.Contains(States, s) }

// Run are the run's own parameters, the ones the profile does not say, as
// the user gives them (CLI flags, a NemoRLRun, the chart's values). They
// are declared here once and travel unchanged from the request
// (pipeline.Request) to the build (Params).
type Run struct {
	Mode Mode
	// RunID names this run: it suffixes the submitted job and is exported as
	// NRL_K8S_RUN_ID to the training entrypoint in raycluster mode.
	RunID string
	// User is the normalised submitting user.
	User string
	// Name is the run name: when set, every object the run owns is named
	// after it (run.go); it is the instance label either way.
	Name string
	// Labels and Annotations are the run's own (a NemoRLRun's metadata,
	// --label, the chart's values): they go onto every object of the run and
	// every pod template (labels.go).
	Labels, Annotations map[string]string
	// Image, when set, replaces the image of every container of the run's
	// pods (Ray pods, the dev pod); profile deployments keep theirs.
	Image string
	// NoDeployments leaves out the profile's deployments and their Services:
	// they are shared by a user's runs (run.go), so only one release or
	// apply should own them.
	NoDeployments bool
	// OnlyDeployments renders the profile's deployments and their Services
	// and nothing of the run (no Ray objects, no dev pod): the shared
	// services as an apply or release of their own (the chart's
	// mode=services), which the user's runs, rendered with NoDeployments,
	// reach by name. Nothing else is shared, so owning them apart is what
	// lets runs come and go without deleting them. Labels and Annotations
	// go onto them (they belong to this apply alone) and Image, when set,
	// replaces the image of every container of their pods.
	OnlyDeployments bool
	// State is the run's declared life; "" is Running.
	State State
}

// KeyValues parses a repeated KEY=VALUE flag (--label, --annotation) into
// the run's Labels or Annotations; nil when none. flag names it in errors.
func KeyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: expected KEY=VALUE", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}

// Params are what the build reads: the run's parameters, and what the
// resolve stage derived from them and the recipe for the pod.
type Params struct {
	Run
	// Config, when set, is the --config every driver call is pointed at: the
	// checked recipe as the pod sees it (podconfig.Of).
	Config string
	// RecipeYAML, under launch.recipeSource=configMap, is the merged recipe
	// the run ships in a ConfigMap (RecipeYAML).
	RecipeYAML string
}

// StateFromSpec is a started run object's state as the cluster runs it,
// read from its spec, never from vocab.StateAnnotation (an annotation any
// profile or hand edit can write, which no controller reads). A RayJob or
// RayCluster is stopped when it is suspended and no Kueue LocalQueue admits
// it; a Kueue-admitted object is never stopped while it exists (Kueue owns
// spec.suspend: suspended means queued), since a stopped Kueue run renders
// without it (manifest.Stop). present is false when the run's RayJob or
// RayCluster is absent: a Kueue run with no such object is stopped.
func StateFromSpec(present, suspended bool, kueueQueue string) State {
	switch {
	case !present:
		return Stopped
	case suspended && kueueQueue == "":
		return Stopped
	}
	return Running
}
