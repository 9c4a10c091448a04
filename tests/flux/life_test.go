package flux_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
)

// A run's life in Git, one Kustomization for the run, commit by commit:
// created and running; a commit elsewhere (a new revision, the same
// build) restarts nothing; a stop in Git prunes the RayJob (the stopped
// form of a Kueue run leaves it out), and re-reconciling the stopped
// state creates nothing; a start in Git creates it again and the job is
// submitted a second time; the run removed from Git (an empty build) is
// pruned whole.
func TestRunLifeInGit(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "fx-life"
	require.NoError(t, kueue.Queue(ctx, env, ns, "lab-queue", "fx-life", "16", waitFor))
	ks := kustomization(env, "fx-a")
	run, stopped := build(t, "fx-a", ns, ""), build(t, "fx-a", ns, runparams.Stopped)

	cs, err := ks.Reconcile(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["RayJob/fx-a"])
	running(t, env, k, ns, "fx-a")
	before := snap(t, env, ns, "fx-a")
	require.Equal(t, 1, before.submissions)

	// A commit elsewhere: a new revision whose build of this run is the
	// same. The apply is not a no-op: Kueue's admission wrote its marks into
	// the RayJob's atomic worker group list, so the dry run differs and the
	// apply takes the list back (generation + 1), restarting nothing.
	admittedJob, err := job(ctx, env, ns, "fx-a")
	require.NoError(t, err)
	cs, err = ks.Reconcile(ctx, run)
	require.NoError(t, err)
	t.Logf("a commit elsewhere: %v", actions(cs))
	assert.Equal(t, "configured", actions(cs)["RayJob/fx-a"])
	for o, a := range actions(cs) {
		if o != "RayJob/fx-a" {
			assert.Equal(t, "unchanged", a, "%s", o)
		}
	}
	j, err := job(ctx, env, ns, "fx-a")
	require.NoError(t, err)
	assert.Equal(t, admittedJob.Generation+1, j.Generation)
	assert.False(t, j.Spec.Suspend, "the reconcile suspended the admitted RayJob again")
	assert.Equal(t, before, snap(t, env, ns, "fx-a"), "a commit elsewhere restarted the run")

	// Stopped in Git.
	cs, err = ks.Reconcile(ctx, stopped)
	require.NoError(t, err)
	assert.Equal(t, "deleted", actions(cs)["RayJob/fx-a"], "the stop commit prunes the Kueue run's RayJob")
	gone(t, env, ns, "fx-a")
	cs, err = ks.Reconcile(ctx, stopped)
	require.NoError(t, err)
	assert.NotContains(t, actions(cs), "RayJob/fx-a")
	_, err = job(ctx, env, ns, "fx-a")
	assert.True(t, apierrors.IsNotFound(err), "a reconcile of the stopped state re-created the RayJob: %v", err)

	// Started again in Git.
	cs, err = ks.Reconcile(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["RayJob/fx-a"])
	running(t, env, k, ns, "fx-a")
	assert.Equal(t, 2, snap(t, env, ns, "fx-a").submissions, "the start in Git submits the job again")

	// Removed from Git: the run's folder builds nothing.
	cs, err = ks.Reconcile(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, "deleted", actions(cs)["RayJob/fx-a"])
	assert.Empty(t, ks.Inventory())
	gone(t, env, ns, "fx-a")
	for _, o := range run {
		_, err := env.Live(ctx, ns, o)
		assert.Error(t, err, "%s %s survived the run's removal", o.GetKind(), o.GetName())
	}
}
