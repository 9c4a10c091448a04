// Package multicluster_test is the multicluster tier: a MultiKueue fleet
// (internal/multicluster: a manager cluster with Kueue v0.17.0's manager
// and its MultiKueue AdmissionCheck, two workers each with Kueue and
// KubeRay v1.5.0's reconcilers) takes a GB300 run rendered for MultiKueue.
// The job object goes to the manager, the worker bundle (everything else
// the render writes: the ComputeDomain, the ResourceClaimTemplates) to
// every worker, the platform's prerequisites (ServiceAccount, PVC) are
// made on every worker, and the tests assert where the run lands and that
// its Pods there find everything they reference.
package multicluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the multicluster tier", multicluster.StopShared))
}

// waitFor bounds each wait for Kueue or KubeRay on 2 shared cores; a
// dispatch crosses two Kueue managers and KubeRay.
const waitFor = 90 * time.Second

// run is a rendered run split by destination.
type run struct {
	docs   []rendered.Doc
	job    *unstructured.Unstructured   // the manager's: the RayJob
	bundle []*unstructured.Unstructured // every worker's: the rest
	// podSecurity is the Pod Security level the run's pods need (the
	// namespace enforces it, as the platform would set it up).
	podSecurity string
}

// render renders the MultiKueue GB300 profile (16 GPUs) as run name in ns.
func render(t *testing.T, name, ns string) run {
	t.Helper()
	r := renderState(t, name, ns, "")
	require.NotNil(t, r.job)
	return r
}

// renderState is render in state ("" is running); a stopped run has no
// job object.
func renderState(t *testing.T, name, ns string, state runparams.State) run {
	t.Helper()
	e := fixtures.ShippedProfile(t, "gb300-qwen3-30b-math-4n-4gpu")
	e.Profile = filepath.Join(testenv.RepoRoot(t), "tests", "multicluster", "testdata", "multikueue.infra.yaml")
	r := fixtures.As(runparams.RayJob)
	r.Name, r.State = name, state
	req := fixtures.Request(e, r)
	req.Namespace = ns
	// The profile's scheduler.kueue.dispatch: multikueue writes the
	// RayJob's spec.managedBy.
	docs := fixtures.Render(t, req)
	objsAny := make([]any, len(docs))
	for i := range docs {
		objsAny[i] = docs[i]
	}
	out := run{docs: docs, podSecurity: string(podsecurity.Evaluate(objsAny).Level)}
	// The product's rule of which object goes where.
	for i, dest := range rendered.Destinations(docs) {
		b, err := emit.Stream(docs[i : i+1])
		require.NoError(t, err)
		objs, err := fixtures.Decode(b)
		require.NoError(t, err)
		require.Len(t, objs, 1)
		switch dest {
		case rendered.Manager:
			require.Nil(t, out.job, "one job object per run")
			out.job = objs[0]
		case rendered.Worker:
			out.bundle = append(out.bundle, objs[0])
		case rendered.OneCluster:
			if state != runparams.Stopped {
				t.Fatalf("%s %s: not dispatched by MultiKueue", docs[i].Kind, docs[i].Name)
			}
			// A stopped run has no job object left to say it is
			// dispatched (until the profile key that writes managedBy
			// lands): the rest stays the workers' bundle.
			out.bundle = append(out.bundle, objs[0])
		default:
			t.Fatalf("%s %s: not dispatched by MultiKueue", docs[i].Kind, docs[i].Name)
		}
	}
	return out
}

// prerequisites makes on env, in ns, what the platform provides for the
// run: its ServiceAccounts and PersistentVolumeClaims (the render
// references them and never writes them).
func prerequisites(t *testing.T, env *operator.Env, ns string, docs []rendered.Doc) {
	t.Helper()
	objs := make([]any, len(docs))
	for i := range docs {
		objs[i] = docs[i]
	}
	pre, err := prereq.FromObjects(objs)
	require.NoError(t, err)
	ctx := context.Background()
	for _, p := range pre {
		var o client.Object
		switch p.Kind {
		case "ServiceAccount":
			o = &corev1.ServiceAccount{}
		case "PersistentVolumeClaim":
			o = &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			}}
		default:
			continue // cluster-wide (DeviceClasses, extended resources): nothing creates Pods from them here
		}
		o.SetNamespace(ns)
		o.SetName(p.Name)
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "%s %s", p.Kind, p.Name)
		}
	}
}

// deliver applies the run as a platform delivers it: the bundle and the
// prerequisites to every worker, then the job object to the manager.
func deliver(t *testing.T, f *multicluster.Fleet, ns string, r run) {
	t.Helper()
	ctx := context.Background()
	for _, w := range f.Workers {
		prerequisites(t, w.Env, ns, r.docs)
		require.NoError(t, w.Env.Apply(ctx, ns, r.bundle), w.Name)
	}
	require.NoError(t, f.Manager.Env.Apply(ctx, ns, []*unstructured.Unstructured{r.job}))
}

// dispatched waits until the run's RayJob exists on exactly one worker
// and returns that worker's index.
func dispatched(t *testing.T, f *multicluster.Fleet, ns, name string) int {
	t.Helper()
	at := -1
	require.NoError(t, operator.Wait(context.Background(), waitFor, "RayJob "+name+" on a worker", func(ctx context.Context) (bool, string, error) {
		var on []int
		for i, w := range f.Workers {
			var job rayv1.RayJob
			err := w.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job)
			if err == nil {
				on = append(on, i)
			} else if !apierrors.IsNotFound(err) {
				return false, "", err
			}
		}
		if len(on) != 1 {
			return false, fmt.Sprintf("on workers %v", on), nil
		}
		at = on[0]
		return true, "", nil
	}), "the manager's Kueue log on %s:\n%s", ns, kueueLog(f, ns))
	return at
}

// podsReferenceOnlyWhatExists waits for KubeRay's Pods of the RayJob on
// env and asserts every ServiceAccount, volume and claim template they
// reference exists there.
func podsReferenceOnlyWhatExists(t *testing.T, env *operator.Env, ns, name string) {
	t.Helper()
	ctx := context.Background()
	rc, err := env.RayClusterOf(ctx, ns, name, waitFor)
	require.NoError(t, err)
	cl, err := env.WaitForCluster(ctx, ns, rc, waitFor)
	require.NoError(t, err)
	pods := cl.Pods()
	require.NotEmpty(t, pods)
	checks := 0
	for _, p := range pods {
		exists(t, env, ns, &corev1.ServiceAccount{}, p.Spec.ServiceAccountName, p.Name)
		checks++
		for _, v := range p.Spec.Volumes {
			switch {
			case v.PersistentVolumeClaim != nil:
				exists(t, env, ns, &corev1.PersistentVolumeClaim{}, v.PersistentVolumeClaim.ClaimName, p.Name)
			case v.ConfigMap != nil:
				exists(t, env, ns, &corev1.ConfigMap{}, v.ConfigMap.Name, p.Name)
			case v.Secret != nil:
				exists(t, env, ns, &corev1.Secret{}, v.Secret.SecretName, p.Name)
			default:
				continue
			}
			checks++
		}
		for _, c := range p.Spec.ResourceClaims {
			if c.ResourceClaimTemplateName == nil {
				continue
			}
			claimTemplateExists(t, env, ns, *c.ResourceClaimTemplateName, p.Name)
			checks++
		}
	}
	t.Logf("%d Pods on the worker, %d references, each present", len(pods), checks)
}

// claimTemplateExists asserts ResourceClaimTemplate name exists in ns, or
// a ComputeDomain there names it as its channel's template: the NVIDIA DRA
// driver's controller (absent here) creates that template from the
// ComputeDomain.
func claimTemplateExists(t *testing.T, env *operator.Env, ns, name, pod string) {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(vocab.DRAAPIVersion)
	u.SetKind("ResourceClaimTemplate")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	if err == nil {
		return
	}
	require.True(t, apierrors.IsNotFound(err), "%v", err)
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(vocab.ComputeDomainAPIVersion)
	l.SetKind("ComputeDomainList")
	require.NoError(t, env.Server.Client.List(ctx, l, client.InNamespace(ns)))
	for _, cd := range l.Items {
		if n, _, _ := unstructured.NestedString(cd.Object, "spec", "channel", "resourceClaimTemplate", "name"); n == name {
			return
		}
	}
	t.Errorf("Pod %s references ResourceClaimTemplate %s: neither it nor a ComputeDomain naming it exists", pod, name)
}

func exists(t *testing.T, env *operator.Env, ns string, o client.Object, name, pod string) {
	t.Helper()
	assert.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, o),
		"Pod %s references %T %s", pod, o, name)
}

// A GB300 run queued on the manager is dispatched to one worker, where
// KubeRay creates its Pods and everything they reference is there; the
// manager holds only the job object, which no KubeRay ever runs there.
func TestMultiKueueDispatchesWithEverythingItNeeds(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-dispatch"
	r := render(t, "mk-one", ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-dispatch", []int{16, 16}, waitFor))
	kinds := map[string]bool{}
	for _, o := range r.bundle {
		kinds[o.GetKind()] = true
	}
	assert.True(t, kinds["ComputeDomain"] && kinds["ResourceClaimTemplate"], "the worker bundle holds the run's DRA objects: %v", kinds)
	deliver(t, f, ns, r)

	at := dispatched(t, f, ns, r.job.GetName())
	w := f.Workers[at]
	t.Logf("dispatched to %s", w.Name)
	var job rayv1.RayJob
	require.NoError(t, w.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.job.GetName()}, &job))
	assert.Nil(t, job.Spec.ManagedBy, "MultiKueue hands the worker's copy to KubeRay")
	podsReferenceOnlyWhatExists(t, w.Env, ns, r.job.GetName())

	var mine rayv1.RayJob
	require.NoError(t, f.Manager.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.job.GetName()}, &mine))
	require.NotNil(t, mine.Spec.ManagedBy)
	assert.Equal(t, vocab.MultiKueueControllerName, *mine.Spec.ManagedBy)
	var pods corev1.PodList
	require.NoError(t, f.Manager.Env.Client.List(ctx, &pods, client.InNamespace(ns)))
	assert.Empty(t, pods.Items, "nothing runs on the manager")
	assert.Equal(t, w.Name, clusterOf(t, f, ns, &mine), "the manager's Workload names the worker")
}

// A second run goes to the other worker while the first holds all of its
// worker's quota.
func TestMultiKueueSecondRunGoesWhereQuotaIs(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-quota"
	first := render(t, "mk-first", ns)
	require.NoError(t, f.Queue(ctx, ns, first.podSecurity, "lab-queue", "lab-quota", []int{16, 16}, waitFor))
	deliver(t, f, ns, first)
	a := dispatched(t, f, ns, first.job.GetName())
	podsReferenceOnlyWhatExists(t, f.Workers[a].Env, ns, first.job.GetName())

	second := render(t, "mk-second", ns)
	deliver(t, f, ns, second)
	b := dispatched(t, f, ns, second.job.GetName())
	assert.NotEqual(t, a, b, "the second run went to %s, where the first holds all 16 GPUs", f.Workers[b].Name)
	podsReferenceOnlyWhatExists(t, f.Workers[b].Env, ns, second.job.GetName())
}

// clusterOf is the worker the manager's Workload for job names
// (status.clusterName), once set.
func clusterOf(t *testing.T, f *multicluster.Fleet, ns string, job *rayv1.RayJob) string {
	t.Helper()
	var name string
	require.NoError(t, operator.Wait(context.Background(), waitFor, "the manager's Workload to name its worker", func(ctx context.Context) (bool, string, error) {
		var err error
		name, err = workloadCluster(ctx, f, ns, job)
		return name != "", "status.clusterName unset", err
	}))
	return name
}

// workloadCluster is the status.clusterName of the manager's Workload for
// job ("" while it has none, or no Workload).
func workloadCluster(ctx context.Context, f *multicluster.Fleet, ns string, job *rayv1.RayJob) (string, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(vocab.KueueAPIVersion)
	l.SetKind("WorkloadList")
	if err := f.Manager.Env.Server.Client.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{vocab.KueueJobUIDLabel: string(job.UID)}); err != nil {
		return "", err
	}
	if len(l.Items) != 1 {
		return "", nil
	}
	name, _, _ := unstructured.NestedString(l.Items[0].Object, "status", "clusterName")
	return name, nil
}

// kueueLog is the manager's Kueue log lines that name namespace ns or
// report an error, the last 4,000 bytes of them: what a failure in CI
// needs, small enough that the test's own message above it is kept.
func kueueLog(f *multicluster.Fleet, ns string) string {
	var keep []string
	for _, l := range strings.Split(f.Manager.Kueue.Log(), "\n") {
		if strings.Contains(l, `"`+ns+`"`) || strings.Contains(l, `"level":"error"`) {
			keep = append(keep, l)
		}
	}
	s := strings.Join(keep, "\n")
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}
