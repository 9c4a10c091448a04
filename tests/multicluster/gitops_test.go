package multicluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// A runs repository delivers a dispatched run with Flux: render-all --flux
// writes the manager's Kustomization (flux-runs/) and the worker bundle's
// (flux-workers/), which the manager's Flux and every worker's reconcile
// as kustomize-controller does (fluxcd/pkg/ssa, prune by inventory). The
// run is dispatched and its Pods on the worker find everything they
// reference; `state: stopped` in Git prunes the manager's RayJob, which
// stops the run on its worker and frees the quota; `state: removed`
// prunes every object of the run on every cluster.
func TestMultiKueueGitOpsDelivery(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns, name := "mk-gitops", "mk-git"
	r := render(t, name, ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-gitops", []int{16, 16}, waitFor))
	for _, w := range f.Workers {
		prerequisites(t, w.Env, ns, r.docs) // the platform's, as for deliver
	}
	g := newGitOps(t, f, ns, name)

	g.commit("")
	assert.Equal(t, []string{"RayJob/" + ns + "/" + name}, g.manager.Inventory(), "the manager holds the job object alone")
	bundle := g.workers[0].Inventory()
	assert.NotContains(t, strings.Join(bundle, " "), "RayJob/", "the bundle holds no job object")
	at := dispatched(t, f, ns, name)
	w := f.Workers[at]
	podsReferenceOnlyWhatExists(t, w.Env, ns, name)
	rc, err := w.Env.RayClusterOf(ctx, ns, name, waitFor)
	require.NoError(t, err)

	g.commit("stopped")
	assert.Empty(t, g.manager.Inventory())
	assert.Equal(t, bundle, g.workers[at].Inventory(), "a stopped run keeps its bundle")
	stoppedOn(t, f, w, ns, name, rc)
	for _, c := range []multicluster.Cluster{f.Manager, w} {
		quotaFree(t, c, "lab-gitops")
	}

	built := g.build(renderall.FluxWorkersDir)
	g.commit("removed")
	for i, wk := range f.Workers {
		assert.Empty(t, g.workers[i].Inventory(), wk.Name)
		for _, o := range built {
			_, err := wk.Env.Live(ctx, ns, o)
			assert.True(t, apierrors.IsNotFound(err), "%s: %s %s survived state: removed: %v", wk.Name, o.GetKind(), o.GetName(), err)
		}
	}
}

// gitOps is a runs repository holding one MultiKueue run and its Flux
// Kustomizations as each cluster's Flux holds them: the manager's, and one
// per worker (every worker applies the same one).
type gitOps struct {
	t              *testing.T
	f              *multicluster.Fleet
	dir, ns, run   string
	manager        *fluxapply.Kustomization
	workers        []*fluxapply.Kustomization
	runFile, runYA string
}

// newGitOps writes the repository: the shipped GB300 recipe and profiles,
// the tier's MultiKueue profile and the run file.
func newGitOps(t *testing.T, f *multicluster.Fleet, ns, run string) *gitOps {
	t.Helper()
	root, dir := testenv.RepoRoot(t), t.TempDir()
	for _, d := range []string{"recipes", "profiles"} {
		testenv.CopyDir(t, filepath.Join(root, d), filepath.Join(dir, d))
	}
	e := fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu")
	recipe, err := filepath.Rel(root, e.Recipe)
	require.NoError(t, err)
	profile := testenv.ReadFile(t, filepath.Join(root, "tests", "multicluster", "testdata", "multikueue.infra.yaml"))
	profile = strings.Replace(profile, "defaults: [../../../profiles/", "defaults: [../../profiles/", 1)
	g := &gitOps{t: t, f: f, dir: dir, ns: ns, run: run, runFile: filepath.Join(dir, "runs", run, "run.yaml")}
	write(t, filepath.Join(dir, "runs", run, "mk.infra.yaml"), profile)
	g.runYA = "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: " + run +
		"\nspec:\n  recipe: ../../" + filepath.ToSlash(recipe) + "\n  profile: mk.infra.yaml\n  mode: rayjob\n  user: " + fixtures.User + "\n  namespace: " + ns + "\n"
	return g
}

// commit sets the run's state ("" is running), runs render-all --flux and
// reconciles the run's Kustomization on the manager and the workers'
// Kustomization on every worker, each configured from its generated file.
func (g *gitOps) commit(state string) {
	t, ctx := g.t, context.Background()
	t.Helper()
	data := g.runYA
	if state != "" {
		data += "  state: " + state + "\n"
	}
	write(t, g.runFile, data)
	code, _, errs := clirun.Run("render-all", g.dir, "--flux", "runs")
	require.Equal(t, 0, code, "render-all: %s", errs)

	spec := g.spec(renderall.FluxRunsDir)
	if g.manager == nil {
		g.manager = fluxapply.New(g.f.Manager.Env.Client, spec)
	}
	_, err := g.manager.Reconcile(ctx, g.build(renderall.FluxRunsDir))
	require.NoError(t, err, "the manager")
	spec = g.spec(renderall.FluxWorkersDir)
	for i, w := range g.f.Workers {
		if len(g.workers) == i {
			g.workers = append(g.workers, fluxapply.New(w.Env.Client, spec))
		}
		_, err := g.workers[i].Reconcile(ctx, g.build(renderall.FluxWorkersDir))
		require.NoError(t, err, w.Name)
	}
}

// kustomization is the run's generated Kustomization in folder dir
// (flux-runs or flux-workers).
func (g *gitOps) kustomization(dir string) *unstructured.Unstructured {
	objs, err := fixtures.Decode([]byte(testenv.ReadFile(g.t, filepath.Join(g.dir, dir, g.run+renderall.Ext))))
	require.NoError(g.t, err)
	require.Len(g.t, objs, 1)
	return objs[0]
}

// spec is what the generated Kustomization tells the reconciler.
func (g *gitOps) spec(dir string) fluxapply.Spec {
	spec, err := fluxapply.SpecOf(g.kustomization(dir))
	require.NoError(g.t, err)
	require.True(g.t, spec.Prune, "%s: prune", dir)
	return spec
}

// build is kustomize's build of the Kustomization's path, without load
// restrictions, as kustomize-controller builds it.
func (g *gitOps) build(dir string) []*unstructured.Unstructured {
	t := g.t
	t.Helper()
	objs, err := fluxapply.Build(g.dir, g.kustomization(dir))
	require.NoError(t, err)
	return objs
}

// quotaFree waits until ClusterQueue cq on c reserves quota for no
// Workload.
func quotaFree(t *testing.T, c multicluster.Cluster, cq string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), waitFor, c.Name+"'s ClusterQueue "+cq+" to reserve nothing", func(ctx context.Context) (bool, string, error) {
		n, _, err := kueue.Counts(ctx, c.Env, cq)
		if err != nil {
			return false, "", err
		}
		return n == 0, "status.reservingWorkloads " + strconv.FormatInt(n, 10), nil
	}))
}

func write(t *testing.T, file, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
}
