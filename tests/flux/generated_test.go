package flux_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The tree `render-all --flux` generates, reconciled commit by commit as
// Flux would: a parent Kustomization on flux-runs/ applies the runs'
// Kustomizations (admitted by Flux's CRD, strictly), and each run's
// Kustomization, configured from the generated object (prune,
// deletionPolicy, force), applies kustomize's build of its folder. Two
// runs start; one is declared state: removed, and its Kustomization
// prunes every object of it while the other runs on untouched; its run
// file then goes, and the parent deletes its Kustomization. The other
// run's file deleted in one commit (what render-all --check refuses)
// deletes its Kustomization too, which orphans the run: it keeps running.
func TestGeneratedTreeRemovesARun(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "fx-gen"
	require.NoError(t, kueue.Queue(ctx, env, ns, "lab-queue", "fx-gen", "32", waitFor))
	installCRDs(t, env.Server.Client, env.Server.Config)
	if err := env.CreateNamespace(ctx, "flux-system", "baseline"); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	repo := runsRepo(t, ns, "fx-ga", "fx-gb")
	f := &fluxTree{t: t, env: env, dir: repo, runs: map[string]*fluxapply.Kustomization{},
		parent: fluxapply.New(env.Client, fluxapply.Spec{Name: "runs", Namespace: "flux-system", Prune: true, DeletionPolicy: fluxapply.Orphan})}

	parent, children := f.commit()
	assert.Equal(t, "created", parent["Kustomization/fx-ga"])
	assert.Equal(t, "created", parent["Kustomization/fx-gb"])
	assert.Equal(t, "created", children["fx-ga"]["RayJob/fx-ga"])
	running(t, env, k, ns, "fx-ga")
	running(t, env, k, ns, "fx-gb")
	a := f.build("fx-ga")
	b := snap(t, env, ns, "fx-gb")

	// state: removed: the run's build is empty, its Kustomization prunes
	// every object of it.
	setState(t, repo, "fx-ga", "removed")
	parent, children = f.commit()
	assert.Equal(t, "configured", parent["Kustomization/fx-ga"], "its health check goes")
	assert.Equal(t, "deleted", children["fx-ga"]["RayJob/fx-ga"])
	assert.Empty(t, f.runs["fx-ga"].Inventory())
	gone(t, env, ns, "fx-ga")
	for _, o := range a {
		_, err := env.Live(ctx, ns, o)
		assert.True(t, apierrors.IsNotFound(err), "%s %s survived state: removed: %v", o.GetKind(), o.GetName(), err)
	}
	assert.Equal(t, b, snap(t, env, ns, "fx-gb"), "removing one run restarted the other")

	// The removed run's file goes in a later commit: its Kustomization is
	// deleted, with nothing left to orphan.
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs", "fx-ga")))
	parent, _ = f.commit()
	assert.Equal(t, "deleted", parent["Kustomization/fx-ga"])
	assert.NotContains(t, f.runs, "fx-ga")

	// The accident the gate refuses: a running run's file deleted in one
	// commit. Its Kustomization goes (deletionPolicy: Orphan) and the run
	// keeps running, with nothing in Git owning it.
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "runs", "fx-gb")))
	parent, _ = f.commit()
	assert.Equal(t, "deleted", parent["Kustomization/fx-gb"])
	jb, err := job(ctx, env, ns, "fx-gb")
	require.NoError(t, err, "the run's RayJob went with its Kustomization")
	assert.Equal(t, rayv1.JobDeploymentStatusRunning, jb.Status.JobDeploymentStatus)
	assert.Equal(t, b, snap(t, env, ns, "fx-gb"))
}

// runsRepo is a runs repository (no git: every file counts) holding the
// shipped H100 Kueue profile and its recipe, and one run file per name.
func runsRepo(t *testing.T, ns string, runs ...string) string {
	t.Helper()
	root, dir := testenv.RepoRoot(t), t.TempDir()
	for _, d := range []string{"recipes", "profiles"} {
		testenv.CopyDir(t, filepath.Join(root, d), filepath.Join(dir, d))
	}
	e := fixtures.ShippedProfile(t, profile)
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		require.NoError(t, err)
		return "../../" + filepath.ToSlash(r)
	}
	for _, run := range runs {
		writeFile(t, filepath.Join(dir, "runs", run, "run.yaml"), "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: "+run+
			"\nspec:\n  recipe: "+rel(e.Recipe)+"\n  profile: "+rel(e.Profile)+"\n  user: "+fixtures.User+"\n  namespace: "+ns+"\n")
	}
	return dir
}

func writeFile(t *testing.T, file, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
}

func setState(t *testing.T, repo, run, state string) {
	t.Helper()
	file := filepath.Join(repo, "runs", run, "run.yaml")
	writeFile(t, file, testenv.ReadFile(t, file)+"  state: "+state+"\n")
}

// fluxTree is Flux on a runs repository: the parent Kustomization on
// flux-runs/ and each run's Kustomization, as the cluster holds them.
type fluxTree struct {
	t      *testing.T
	env    *operator.Env
	dir    string
	parent *fluxapply.Kustomization
	runs   map[string]*fluxapply.Kustomization
}

// commit is render-all --flux on the repository, then one reconcile of
// the parent and of every run's Kustomization it holds; a Kustomization
// the parent prunes is finalized with its own deletionPolicy. It returns
// what the parent did and what each run's Kustomization did.
func (f *fluxTree) commit() (map[string]string, map[string]map[string]string) {
	t, ctx := f.t, context.Background()
	t.Helper()
	code, out, errs := clirun.Run("render-all", f.dir, "--flux", "runs")
	require.Equal(t, 0, code, "render-all: %s", errs)
	t.Logf("render-all: %s", out)

	// kustomize-controller's build of a folder without a kustomization.yaml:
	// every file in it.
	entries, err := os.ReadDir(filepath.Join(f.dir, renderall.FluxRunsDir))
	require.NoError(t, err)
	var kss []*unstructured.Unstructured
	for _, e := range entries {
		objs, err := fixtures.Decode([]byte(testenv.ReadFile(t, filepath.Join(f.dir, renderall.FluxRunsDir, e.Name()))))
		require.NoError(t, err)
		require.Len(t, objs, 1, e.Name())
		// A strict dry-run create, under a name the parent's apply never
		// takes.
		probe := objs[0].DeepCopy()
		probe.SetName("dry-run-" + probe.GetName())
		require.NoError(t, dryRun(ctx, f.env.Server.Client, probe), "Flux's CRD refuses %s", e.Name())
		kss = append(kss, objs[0])
	}
	cs, err := f.parent.Reconcile(ctx, kss)
	require.NoError(t, err)
	parent := actions(cs)
	for o, a := range parent {
		if name, ok := strings.CutPrefix(o, "Kustomization/"); ok && a == "deleted" {
			_, err := f.runs[name].Finalize(ctx)
			require.NoError(t, err)
			delete(f.runs, name)
		}
	}
	children := map[string]map[string]string{}
	for _, ks := range kss {
		spec := specOf(t, ks)
		if f.runs[spec.Name] == nil {
			f.runs[spec.Name] = fluxapply.New(f.env.Client, spec)
		}
		f.runs[spec.Name].Spec = spec
		cs, err := f.runs[spec.Name].Reconcile(ctx, f.build(spec.Name))
		require.NoError(t, err)
		children[spec.Name] = actions(cs)
	}
	return parent, children
}

// specOf is what a generated Kustomization tells the reconciler.
func specOf(t *testing.T, ks *unstructured.Unstructured) fluxapply.Spec {
	t.Helper()
	spec, err := fluxapply.SpecOf(ks)
	require.NoError(t, err)
	return spec
}

// build is kustomize's build of the run's Kustomization path, without
// load restrictions, as kustomize-controller builds it.
func (f *fluxTree) build(run string) []*unstructured.Unstructured {
	t := f.t
	t.Helper()
	ks, err := fixtures.Decode([]byte(testenv.ReadFile(t, filepath.Join(f.dir, renderall.FluxRunsDir, run+".yaml"))))
	require.NoError(t, err)
	objs, err := fluxapply.Build(f.dir, ks[0])
	require.NoError(t, err)
	return objs
}
