// Package kueue_test is the Kueue tier: a Kueue run rendered from the
// shipped H100 Kueue profile is applied to the real kube-apiserver, where
// Kueue v0.17.0's own manager (webhooks, job reconcilers, scheduler;
// internal/kueue) and KubeRay v1.5.0's reconcilers (internal/operator) act
// on it as in a cluster. It asserts what the profile promises: Kueue's
// webhook suspends the RayJob on creation, admits it when the ClusterQueue
// has quota, and KubeRay then creates its Pods; re-applying the same
// manifests (server-side and client-side) never suspends an admitted job
// again; a run larger than the quota stays queued with Kueue's reason, and
// preflight and status say so. A run KAI places and Kueue admits (the
// gb300-kai-kueue golden) passes Kueue's webhooks with KAI's fields intact.
package kueue_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the Kueue tier", kueue.StopShared))
}

// waitFor bounds each wait for Kueue or KubeRay on 2 shared cores.
const waitFor = 60 * time.Second

// render renders the shipped Kueue profile (2 workers x 8 GPUs, LocalQueue
// lab-queue) as run name in namespace ns, in mode (rayjob: the RayJob
// carries the queue label; raycluster: the RayCluster does), and names its
// RayJob.
func render(t *testing.T, name, ns string, mode runparams.Mode) (docs []rendered.Doc, objs []*unstructured.Unstructured, job string) {
	t.Helper()
	run := fixtures.As(mode)
	run.Name = name
	req := fixtures.Request(fixtures.ShippedProfile(t, "h100-kueue-2n8g"), run)
	req.Namespace = ns
	docs = fixtures.Render(t, req)
	admitted := "RayJob"
	if mode == runparams.RayCluster {
		admitted = "RayCluster"
	}
	b, err := emit.Stream(docs)
	require.NoError(t, err)
	objs, err = fixtures.Decode(b)
	require.NoError(t, err)
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			job = o.GetName()
		}
		if o.GetKind() == admitted {
			_, has, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "suspend")
			require.False(t, has, "a Kueue run never writes spec.suspend")
			require.Equal(t, "lab-queue", o.GetLabels()["kueue.x-k8s.io/queue-name"], "%s %s", o.GetKind(), o.GetName())
		}
	}
	return docs, objs, job
}

// queue creates ns, a ClusterQueue cq with gpus nvidia.com/gpu of quota
// and the LocalQueue lab-queue the profile names (kueue.Queue).
func queue(t *testing.T, env *operator.Env, ns, cq, gpus string) {
	t.Helper()
	require.NoError(t, kueue.Queue(context.Background(), env, ns, "lab-queue", cq, gpus, waitFor))
}

// workload is the Workload Kueue made for the RayJob (or RayCluster), once
// it exists.
func workload(t *testing.T, env *operator.Env, job client.Object) *unstructured.Unstructured {
	t.Helper()
	wl, err := kueue.Workload(context.Background(), env, job, waitFor)
	require.NoError(t, err)
	return wl
}

func rayJob(t *testing.T, env *operator.Env, ns, name string) *rayv1.RayJob {
	t.Helper()
	var job rayv1.RayJob
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &job))
	return &job
}

func conn(t *testing.T, env *operator.Env, ns string) *kube.Conn {
	t.Helper()
	c, err := kube.FromConfig(env.Server.Config, ns, kube.Options{})
	require.NoError(t, err)
	return c
}

// A queued run is admitted when the ClusterQueue has quota, and KubeRay
// creates its Pods; re-applying the same manifests, server-side or as
// kubectl's client-side apply patches, leaves the admitted job running.
func TestAdmittedThenReappliedStaysRunning(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-admit"
	queue(t, env, ns, "lab-16", "16")
	docs, objs, name := render(t, "kq-admit", ns, runparams.RayJob)

	// Kueue's mutating webhook suspends a labelled RayJob on creation: a
	// dry-run create shows what the server would store.
	for _, o := range objs {
		if o.GetKind() == "RayJob" {
			dry := o.DeepCopy()
			require.NoError(t, env.Server.Client.Create(ctx, dry, client.DryRunAll), "Kueue's webhooks refuse the render")
			suspend, _, _ := unstructured.NestedBool(dry.Object, "spec", "suspend")
			require.True(t, suspend, "Kueue's webhook suspends the RayJob it will admit")
		}
	}

	// preflight: the LocalQueue, its ClusterQueue and 16 of 16 GPUs free.
	line := localQueueLine(t, env, docs, ns)
	assert.Equal(t, preflight.OK, line.State, line.Detail)
	assert.Contains(t, line.Detail, "ClusterQueue lab-16")
	assert.Contains(t, line.Detail, "needs 16 nvidia.com/gpu; 16 of 16 free")

	require.NoError(t, env.Apply(ctx, ns, objs))
	job := rayJob(t, env, ns, name)
	wl := workload(t, env, job)
	admitted(t, env, k, ns, name)
	job = rayJob(t, env, ns, name)
	cluster := job.Status.RayClusterName
	require.NotEmpty(t, cluster)
	var rc rayv1.RayCluster
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rc))

	// status reads the Workload: admitted by lab-16.
	st, err := runstatus.Collect(ctx, conn(t, env, ns), ns, "kq-admit", time.Now())
	require.NoError(t, err)
	require.NotEmpty(t, st.Admissions, "status reads Kueue's Workload")
	assert.Equal(t, runstatus.AdmissionAdmitted, st.Admissions[0].State, "%+v", st.Admissions)
	assert.Equal(t, "Workload", st.Admissions[0].Kind)
	assert.Equal(t, wl.GetName(), st.Admissions[0].Name)

	// The next apply of the same manifests: server-side (kubectl apply
	// --server-side, Argo CD's and Flux's default), then as kubectl's
	// client-side apply sends it for a custom resource (a JSON merge patch
	// of the manifest, which names no spec.suspend).
	require.NoError(t, env.Apply(ctx, ns, objs))
	for _, o := range objs {
		body, err := json.Marshal(o.Object)
		require.NoError(t, err)
		u := o.DeepCopy()
		u.SetNamespace(ns)
		require.NoError(t, env.Server.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, body), client.FieldOwner("kubectl-client-side-apply")), "%s %s", o.GetKind(), o.GetName())
	}
	// Give Kueue and KubeRay time to act on the applies, then look again.
	time.Sleep(3 * time.Second)
	job = rayJob(t, env, ns, name)
	assert.False(t, job.Spec.Suspend, "re-applying the render suspended the admitted RayJob")
	var again rayv1.RayCluster
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &again), "the admitted job's RayCluster is gone after a re-apply")
	assert.Equal(t, rc.UID, again.UID, "the RayCluster was recreated")
}

// A run larger than the ClusterQueue's whole quota is never admitted:
// preflight says so before apply, the Workload stays pending with Kueue's
// own reason, the RayJob stays suspended without Pods, and status says it
// is queued, with that reason.
func TestOverQuotaStaysQueued(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-over"
	queue(t, env, ns, "lab-8", "8")
	docs, objs, name := render(t, "kq-over", ns, runparams.RayJob)

	line := localQueueLine(t, env, docs, ns)
	assert.Equal(t, preflight.Missing, line.State, line.Detail)
	assert.Contains(t, line.Detail, "needs 16 nvidia.com/gpu; 8 of 8 free: more than the whole nominal quota, and ClusterQueue lab-8 is in no cohort to borrow from")

	require.NoError(t, env.Apply(ctx, ns, objs))
	job := rayJob(t, env, ns, name)
	var message string
	require.NoError(t, operator.Wait(ctx, waitFor, "Kueue to give its reason", func(ctx context.Context) (bool, string, error) {
		wl := workload(t, env, job)
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "QuotaReserved" && m["status"] == "False" {
				message, _ = m["message"].(string)
				return message != "", message, nil
			}
		}
		return false, "no QuotaReserved=False yet", nil
	}), "Kueue's log:\n%s", fixtures.Tail(k.Log(), 6000))
	assert.Contains(t, message, "nvidia.com/gpu", "Kueue's reason names the resource")

	job = rayJob(t, env, ns, name)
	assert.True(t, job.Spec.Suspend, "an unadmitted RayJob stays suspended")
	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(ns)))
	assert.Empty(t, pods.Items, "KubeRay created Pods for a job Kueue did not admit")

	st, err := runstatus.Collect(ctx, conn(t, env, ns), ns, "kq-over", time.Now())
	require.NoError(t, err)
	assert.Equal(t, runstatus.Queued, st.Verdict, st.Summary)
	assert.Contains(t, st.Summary, "queue lab-queue")
	assert.Contains(t, st.Summary, message)
	assert.Contains(t, st.Text(), "Workload queued")

	// Argo CD's health check, on the RayJob as Kueue and KubeRay left it.
	health, msg := argohealth.Check(t, argohealth.Script(t, "rayjob-health.lua"), job)
	assert.Equal(t, "Suspended", health)
	assert.Contains(t, msg, "queued by Kueue in LocalQueue lab-queue")
}

// Kueue's webhook refuses what check refuses for a Kueue run: a job that
// keeps its cluster after finishing (shutdownAfterJobFinishes: false).
func TestKueueRefusesWhatCheckRefuses(t *testing.T) {
	env, _ := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-refuse"
	queue(t, env, ns, "lab-refuse", "16")
	_, objs, _ := render(t, "kq-refuse", ns, runparams.RayJob)
	for _, o := range objs {
		if o.GetKind() != "RayJob" {
			continue
		}
		u := o.DeepCopy()
		u.SetNamespace(ns)
		require.NoError(t, unstructured.SetNestedField(u.Object, false, "spec", "shutdownAfterJobFinishes"))
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(0), "spec", "ttlSecondsAfterFinished"))
		err := env.Server.Client.Create(ctx, u, client.DryRunAll)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "a kueue managed job should delete the cluster after finishing")
	}
}

// localQueueLine is preflight's LocalQueue line for the rendered run.
func localQueueLine(t *testing.T, env *operator.Env, docs []rendered.Doc, ns string) preflight.Line {
	t.Helper()
	in, err := preflight.InputOf(docs, "", ns)
	require.NoError(t, err)
	rep, err := preflight.Run(context.Background(), conn(t, env, ns), in)
	require.NoError(t, err)
	return lineOf(t, rep, "LocalQueue")
}

func lineOf(t *testing.T, rep preflight.Report, kind string) preflight.Line {
	t.Helper()
	for _, l := range rep.Lines {
		if l.Kind == kind {
			return l
		}
	}
	var kinds []string
	for _, l := range rep.Lines {
		kinds = append(kinds, l.Kind)
	}
	t.Fatalf("no %s line in preflight's report (%s)", kind, strings.Join(kinds, ", "))
	return preflight.Line{}
}

// KAI places, Kueue admits (the gb300-kai-kueue golden: scheduler.kueue
// beside kind kai): Kueue's webhooks accept the RayJob with KAI's
// schedulerName, queue label and topology annotations beside Kueue's
// labels, suspend it for admission, and change none of KAI's fields.
func TestKueueAdmitsKAIPlacedRun(t *testing.T) {
	env, _ := kueue.Shared(t)
	ctx := context.Background()
	ns := "kq-kai"
	require.NoError(t, kueue.Queue(ctx, env, ns, "team-a", "kq-kai-cq", "16", waitFor))
	var job *unstructured.Unstructured
	for _, g := range fixtures.Goldens(t, "rayjob") {
		for _, o := range g.Objs {
			if g.Case == "gb300-kai-kueue" && o.GetKind() == "RayJob" {
				job = o.DeepCopy()
			}
		}
	}
	require.NotNil(t, job, "the gb300-kai-kueue golden's RayJob")
	job.SetNamespace(ns)
	require.NoError(t, env.Server.Client.Create(ctx, job, client.DryRunAll), "Kueue's webhooks refuse KAI's fields beside its own")
	suspend, _, _ := unstructured.NestedBool(job.Object, "spec", "suspend")
	assert.True(t, suspend, "Kueue's webhook suspends the RayJob it will admit")
	assert.Equal(t, "team-a", job.GetLabels()["kueue.x-k8s.io/queue-name"])
	assert.Equal(t, "rl", job.GetLabels()["kai.scheduler/queue"])
	assert.Equal(t, "nvidia.com/gpu.clique", job.GetAnnotations()["kai.scheduler/topology-preferred-placement"])
	workers, _, _ := unstructured.NestedSlice(job.Object, "spec", "rayClusterSpec", "workerGroupSpecs")
	require.NotEmpty(t, workers)
	for _, w := range workers {
		name, _, _ := unstructured.NestedString(w.(map[string]any), "template", "spec", "schedulerName")
		assert.Equal(t, "kai-scheduler", name)
	}
}
