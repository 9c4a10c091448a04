package kueue_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	kueueenv "github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The GitOps tools and kubectl, as the field managers their server-side
// applies carry (Flux, Argo CD, `kubectl apply --server-side`).
var editors = []string{"kustomize-controller", "argocd-controller", "kubectl"}

// edit is a change of a run's RayJob (or RayCluster) a person or a tool
// may send, and the part of the refusal that names it.
type edit struct {
	name   string
	change func(t *testing.T, u *unstructured.Unstructured)
	want   string
}

func setField(t *testing.T, u *unstructured.Unstructured, v any, path ...string) {
	t.Helper()
	require.NoError(t, unstructured.SetNestedField(u.Object, v, path...), strings.Join(path, "."))
}

// firstWorker edits the first worker group of the cluster spec at path.
func firstWorker(t *testing.T, u *unstructured.Unstructured, set func(g map[string]any), path ...string) {
	t.Helper()
	groups, found, err := unstructured.NestedSlice(u.Object, append(path, "workerGroupSpecs")...)
	require.NoError(t, err)
	require.True(t, found && len(groups) > 0, "%s has worker groups", strings.Join(path, "."))
	set(groups[0].(map[string]any))
	require.NoError(t, unstructured.SetNestedSlice(u.Object, groups, append(path, "workerGroupSpecs")...))
}

func workerImage(t *testing.T, path ...string) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) {
		firstWorker(t, u, func(g map[string]any) {
			c := g["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["image"] = "example.com/other:1"
		}, path...)
	}
}

func workerReplicas(t *testing.T, path ...string) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) {
		firstWorker(t, u, func(g map[string]any) {
			n, _ := g["replicas"].(int64)
			g["replicas"], g["minReplicas"], g["maxReplicas"] = n+1, n+1, n+1
		}, path...)
	}
}

// startedRunEdits are the edits the policy refuses on a started Kueue
// RayJob.
func startedRunEdits(t *testing.T) []edit {
	return []edit{
		{"entrypoint", func(t *testing.T, u *unstructured.Unstructured) {
			ep, _, _ := unstructured.NestedString(u.Object, "spec", "entrypoint")
			setField(t, u, ep+" grpo.max_num_steps=7", "spec", "entrypoint")
		}, "spec.entrypoint of a started run"},
		{"pod template", workerImage(t, "spec", "rayClusterSpec"), "the worker groups of a started run"},
		{"worker count", workerReplicas(t, "spec", "rayClusterSpec"), "the worker counts (replicas, minReplicas, maxReplicas)"},
		{"queue label", func(t *testing.T, u *unstructured.Unstructured) {
			labels := u.GetLabels()
			labels[vocab.KueueQueueLabel] = "other-queue"
			u.SetLabels(labels)
		}, "the Kueue queue label"},
	}
}

// installPolicy creates the shipped policy and binding (the API server
// compiles their CEL on creation) and removes them when the test ends, so
// the package's other tests run without it.
func installPolicy(t *testing.T, env *operator.Env) {
	t.Helper()
	ctx := context.Background()
	objs, err := fixtures.Decode([]byte(testenv.ReadFile(t, filepath.Join(testenv.RepoRoot(t), policy.File))))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	for _, o := range objs {
		require.NoError(t, env.Server.Client.Create(ctx, o.DeepCopy()), "the API server refuses %s %s", o.GetKind(), o.GetName())
		t.Cleanup(func() { assert.NoError(t, client.IgnoreNotFound(env.Server.Client.Delete(ctx, o.DeepCopy()))) })
	}
}

// applyAs is a server-side apply of u as manager (conflicts forced, as
// Flux, Argo CD and `kubectl apply --server-side --force-conflicts` send
// it), dry-run when dry.
func applyAs(ctx context.Context, env *operator.Env, manager string, u *unstructured.Unstructured, dry bool) error {
	opts := []client.ApplyOption{client.FieldOwner(manager), client.ForceOwnership}
	if dry {
		opts = append(opts, client.DryRunAll)
	}
	return env.Server.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...)
}

// refusedWith asserts err is the policy's refusal naming want and the way
// to change a started run.
func refusedWith(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err, "the edit passed")
	assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), policy.Name)
	assert.Contains(t, err.Error(), want)
	assert.Contains(t, err.Error(), policy.Way)
}

// The started-run policy in the real API server, with KubeRay and Kueue
// reconciling as their ServiceAccounts' users (operator.User,
// kueueenv.User), the identities the shipped binding lets through. A Kueue
// RayJob run is applied as Flux applies it, queued, admitted and started
// under the policy: Kueue's and KubeRay's writes pass, the run reaches
// Running. Flux, Argo CD and kubectl then each send the edits that never
// reach a started run (entrypoint, a pod template, the worker counts, the
// queue label), and the API server refuses each with the policy's message;
// the unchanged render re-applied passes. A stop (spec.suspend: true) and
// the deletion pass. A run not started (suspended, not Kueue's) is edited
// freely, and a started RayCluster that is not Kueue's is scaled, as
// KubeRay applies that live.
func TestStartedRunPolicy(t *testing.T) {
	env, k := kueueenv.Shared(t)
	ctx := context.Background()
	installPolicy(t, env)
	ns := "kq-policy"
	queue(t, env, ns, "lab-policy", "16")
	_, objs, name := render(t, "kq-policy", ns, runparams.RayJob)
	var job *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			job = o.DeepCopy()
			job.SetNamespace(ns)
		}
	}
	require.NotNil(t, job)

	require.NoError(t, env.ApplyAs(ctx, ns, editors[0], objs))
	admitted(t, env, k, ns, name)
	started := rayJob(t, env, ns, name)
	c, err := env.WaitForCluster(ctx, ns, started.Status.RayClusterName, waitFor)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	_, err = env.WaitForJobDeploymentStatus(ctx, ns, name, rayv1.JobDeploymentStatusRunning, waitFor)
	require.NoError(t, err, "Kueue's log:\n%s", fixtures.Tail(k.Log(), 4000))
	started = rayJob(t, env, ns, name)

	// The policy is in force once a dry-run edit is refused (the API
	// server loads policies asynchronously).
	first := startedRunEdits(t)[0]
	probe := job.DeepCopy()
	first.change(t, probe)
	require.NoError(t, operator.Wait(ctx, waitFor, "the policy to be in force", func(ctx context.Context) (bool, string, error) {
		err := applyAs(ctx, env, editors[0], probe, true)
		return err != nil, fmt.Sprint(err), nil
	}))

	for _, manager := range editors {
		for _, e := range startedRunEdits(t) {
			t.Run(manager+"/"+e.name, func(t *testing.T) {
				u := job.DeepCopy()
				e.change(t, u)
				refusedWith(t, applyAs(ctx, env, manager, u, false), e.want)
			})
		}
		t.Run(manager+"/unchanged", func(t *testing.T) {
			require.NoError(t, applyAs(ctx, env, manager, job, false), "re-applying the render of a started run")
		})
	}
	after := rayJob(t, env, ns, name)
	assert.Equal(t, started.Spec.Entrypoint, after.Spec.Entrypoint)
	assert.Equal(t, started.Labels[vocab.KueueQueueLabel], after.Labels[vocab.KueueQueueLabel])
	assert.Equal(t, started.Status.RayClusterName, after.Status.RayClusterName, "the run was restarted")
	assert.Len(t, env.Dashboard.Submissions(ns), 1, "the job was submitted again")

	// The exemption is by identity: the edit KubeRay's user sends passes,
	// the same edit from another ServiceAccount is refused. (The writes
	// the controllers made above pass on the field rules alone: what they
	// write into a started run is ignored or is a stop; the exemption
	// covers whole-object updates of theirs this run did not make.)
	t.Run("identities", func(t *testing.T) {
		for _, c := range []struct {
			user string
			pass bool
		}{{"system:serviceaccount:default:someone-else", false}, {operator.User, true}} {
			cfg, _, err := env.Server.AsUser(c.user)
			require.NoError(t, err)
			as, err := client.New(cfg, client.Options{})
			require.NoError(t, err)
			u := job.DeepCopy()
			startedRunEdits(t)[0].change(t, u)
			err = as.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kuberay-operator"), client.ForceOwnership, client.DryRunAll)
			if c.pass {
				assert.NoError(t, err, c.user)
			} else {
				refusedWith(t, err, "spec.entrypoint of a started run")
			}
		}
	})

	// A stop by hand (kubectl patch), then the deletion, pass.
	require.NoError(t, env.Server.Client.Patch(ctx, job.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":true}}`)),
		client.FieldOwner("kubectl-patch")), "a stop of a started run")
	require.NoError(t, env.Server.Client.Delete(ctx, job.DeepCopy()), "the deletion of a started run")

	t.Run("not started", func(t *testing.T) { notStarted(t, env, ns, job) })
	t.Run("RayCluster scaled live", func(t *testing.T) { liveRayCluster(t, env, ns, job) })
}

// notStarted: the same RayJob without Kueue's label, created suspended
// (a stopped run), is edited: entrypoint, pod template, worker count.
func notStarted(t *testing.T, env *operator.Env, ns string, job *unstructured.Unstructured) {
	ctx := context.Background()
	held := job.DeepCopy()
	held.SetName("kq-policy-held")
	labels := held.GetLabels()
	delete(labels, vocab.KueueQueueLabel)
	delete(labels, vocab.KueuePriorityClassLabel)
	held.SetLabels(labels)
	setField(t, held, true, "spec", "suspend")
	require.NoError(t, applyAs(ctx, env, editors[0], held, false))
	for _, e := range startedRunEdits(t)[:3] {
		e.change(t, held)
	}
	for _, manager := range editors {
		require.NoError(t, applyAs(ctx, env, manager, held, false), "an edit of a run not started, as %s", manager)
	}
	var live rayv1.RayJob
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: held.GetName()}, &live))
	want, _, _ := unstructured.NestedString(held.Object, "spec", "entrypoint")
	assert.Equal(t, want, live.Spec.Entrypoint, "the edit was stored")
}

// liveRayCluster: a started RayCluster of the run's shape (the rendered
// RayJob's cluster spec), not Kueue's: its worker counts change (KubeRay
// scales to them), its pod templates do not.
func liveRayCluster(t *testing.T, env *operator.Env, ns string, job *unstructured.Unstructured) {
	ctx := context.Background()
	spec, found, err := unstructured.NestedMap(job.Object, "spec", "rayClusterSpec")
	require.NoError(t, err)
	require.True(t, found, "the rendered RayJob has a rayClusterSpec")
	rc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": "kq-policy-cluster", "namespace": ns, "labels": map[string]any{
			"app.kubernetes.io/managed-by": "nrl-k8s", "app.kubernetes.io/instance": "kq-policy-cluster"}},
		"spec": spec,
	}}
	require.NoError(t, applyAs(ctx, env, editors[0], rc, false))
	t.Cleanup(func() { assert.NoError(t, client.IgnoreNotFound(env.Server.Client.Delete(ctx, rc.DeepCopy()))) })
	for _, manager := range editors {
		scaled := rc.DeepCopy()
		workerReplicas(t, "spec")(t, scaled)
		require.NoError(t, applyAs(ctx, env, manager, scaled, false), "scaling a started RayCluster as %s", manager)
		rc = scaled
		image := rc.DeepCopy()
		workerImage(t, "spec")(t, image)
		refusedWith(t, applyAs(ctx, env, manager, image, false), "the worker groups of a started run")
	}
}
