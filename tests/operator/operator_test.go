// Package operator_test is the operator tier: KubeRay v1.5.0's own
// RayCluster and RayJob reconcilers (internal/operator) reconcile every
// golden output and a fresh render of every shipped profile in every mode
// inside the real kube-apiserver, ServiceAccount and PodSecurity admission
// on. It asserts on what KubeRay creates, not on our templates: the
// RayCluster of a RayJob, every head and worker Pod and the head Service
// exist and none was refused (no FailedToCreate* Event), the Pods keep our
// resource claims, scheduler, instance label, volumes and subPath mounts,
// and once the Pods are marked Running every RayJob is submitted to the
// cluster it belongs to (in raycluster mode, the one its clusterSelector
// names). Each run goes into a namespace of its own, all in parallel.
package operator_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the operator tier", operator.StopShared))
}

// Bounds of each wait: generous for 2 shared cores (a 64-worker run is
// created in about a second on an idle machine), short enough that a stuck
// run fails with what it was waiting for instead of hanging the tier.
const (
	createTimeout = 90 * time.Second
	submitTimeout = 60 * time.Second
)

// runs are every golden output and every shipped profile in every mode.
func runs(t *testing.T) []fixtures.Run {
	t.Helper()
	var out []fixtures.Run
	for _, g := range fixtures.Goldens(t, "*") {
		if stoppedRun(g.Objs) {
			continue // nothing starts it: TestStoppedRunStaysStopped
		}
		if fixtures.Dispatched(g.Objs) {
			continue // MultiKueue's, not this cluster's KubeRay's: tests/multicluster
		}
		out = append(out, fixtures.Run{Name: "golden-" + g.Case + "-" + g.Mode, Objs: g.Objs})
	}
	for _, p := range fixtures.Shipped(t) {
		for _, mode := range runparams.Modes {
			out = append(out, fixtures.Run{Name: "shipped-" + p.Name + "-" + string(mode), Objs: fixtures.Objects(t, fixtures.Request(p, fixtures.As(mode)))})
		}
	}
	return out
}

// stoppedRun says objs are a stopped run's (state: stopped).
func stoppedRun(objs []*unstructured.Unstructured) bool {
	for _, o := range objs {
		if o.GetAnnotations()[vocab.StateAnnotation] == string(runparams.Stopped) {
			return true
		}
	}
	return false
}

// Every golden output and every shipped profile in every mode: KubeRay
// creates every Pod of every run, keeping what we rendered into them, and
// submits every RayJob to its cluster.
func TestKubeRayReconcilesEveryRun(t *testing.T) {
	env := operator.Shared(t)
	runs := runs(t)
	begin := time.Now()
	t.Cleanup(func() { t.Logf("%d runs reconciled in %s", len(runs), time.Since(begin).Round(time.Millisecond)) })
	// Everything is applied first, so KubeRay reconciles every namespace
	// at once while the subtests (at most GOMAXPROCS at a time) assert.
	applied := make([]error, len(runs))
	for i, r := range runs {
		sas, _ := fixtures.References(r.Objs)
		applied[i] = env.SetUp(context.Background(), fixtures.NamespaceFor(r.Name), "", sas, r.Objs)
	}
	for i, r := range runs {
		t.Run(r.Name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, applied[i])
			exercise(t, env, fixtures.NamespaceFor(r.Name), r.Objs)
		})
	}
}

// exercise asserts what KubeRay does with one applied run in ns.
func exercise(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	var clusters []*operator.Cluster
	// want maps each RayJob to the cluster its job must be submitted to.
	want := map[string]string{}
	for _, u := range objs {
		switch u.GetKind() {
		case "RayCluster":
			rc := fixtures.Typed[rayv1.RayCluster](t, u.Object)
			c, err := env.WaitForCluster(ctx, ns, rc.Name, createTimeout)
			require.NoError(t, err)
			requireKept(t, rc.Spec, c)
			clusters = append(clusters, c)
		case "RayJob":
			rj := fixtures.Typed[rayv1.RayJob](t, u.Object)
			name, err := env.RayClusterOf(ctx, ns, rj.Name, createTimeout)
			require.NoError(t, err)
			want[rj.Name] = name
			if sel := rj.Spec.ClusterSelector; len(sel) > 0 {
				require.Equal(t, sel["ray.io/cluster"], name, "RayJob %s: KubeRay picked another cluster than its clusterSelector names", rj.Name)
				continue // the cluster is one of the run's RayClusters
			}
			c, err := env.WaitForCluster(ctx, ns, name, createTimeout)
			require.NoError(t, err)
			require.Equal(t, rj.Name, c.RayCluster.Labels["ray.io/originated-from-cr-name"], "RayCluster %s is not the RayJob's", name)
			requireKept(t, *rj.Spec.RayClusterSpec, c)
			clusters = append(clusters, c)
		case "Pod":
			// dev mode: the API server admitted it (Apply succeeded);
			// it carries what we rendered as admission left it.
			var p corev1.Pod
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName()}, &p))
			tmpl := fixtures.Typed[corev1.Pod](t, u.Object)
			requirePodKeeps(t, corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}, p)
		}
	}
	if len(want) == 0 {
		return
	}
	// Later stage: the Pods run (as a kubelet would report), so each
	// cluster becomes Ready and KubeRay submits every RayJob to it.
	for _, c := range clusters {
		require.NoError(t, env.MarkRunningReady(ctx, c.Pods()))
	}
	for rj, cluster := range want {
		_, err := env.WaitForJobDeploymentStatus(ctx, ns, rj, rayv1.JobDeploymentStatusRunning, submitTimeout)
		require.NoError(t, err)
		require.NoError(t, operator.Wait(ctx, submitTimeout, "KubeRay to submit RayJob "+ns+"/"+rj,
			func(context.Context) (bool, string, error) {
				for _, s := range env.Dashboard.Submissions(ns) {
					if s.RayJob == rj {
						require.Equal(t, cluster, s.Cluster, "RayJob %s was submitted to another cluster", rj)
						return true, "", nil
					}
				}
				return false, fmt.Sprintf("submissions: %+v", env.Dashboard.Submissions(ns)), nil
			}))
	}
	events, err := env.Events(ctx, ns)
	require.NoError(t, err)
	require.Empty(t, operator.Refusals(events), "refused:\n%s", operator.FormatEvents(operator.Refusals(events)))
}

// requireKept asserts that every Pod KubeRay created for spec carries what
// we rendered into its group's template.
func requireKept(t *testing.T, spec rayv1.RayClusterSpec, c *operator.Cluster) {
	t.Helper()
	requirePodKeeps(t, spec.HeadGroupSpec.Template, c.Head)
	for _, g := range spec.WorkerGroupSpecs {
		n := 0
		for _, p := range c.Workers {
			if p.Labels["ray.io/group"] == g.GroupName {
				requirePodKeeps(t, g.Template, p)
				n++
			}
		}
		if c.WantWorkers > 0 {
			require.NotZero(t, n, "no worker Pod of group %s", g.GroupName)
		}
	}
}

// requirePodKeeps asserts that pod, created from tmpl by KubeRay (or as
// rendered, for a plain Pod), keeps our resource claims (pod and
// container), scheduler, instance label, volumes and volume mounts.
func requirePodKeeps(t *testing.T, tmpl corev1.PodTemplateSpec, pod corev1.Pod) {
	t.Helper()
	where := "Pod " + pod.Name
	require.Equal(t, tmpl.Spec.ResourceClaims, pod.Spec.ResourceClaims, "%s: resourceClaims", where)
	if tmpl.Spec.SchedulerName != "" {
		require.Equal(t, tmpl.Spec.SchedulerName, pod.Spec.SchedulerName, "%s: schedulerName", where)
	}
	if tmpl.Spec.ServiceAccountName != "" {
		require.Equal(t, tmpl.Spec.ServiceAccountName, pod.Spec.ServiceAccountName, "%s: serviceAccountName", where)
	}
	const instance = "app.kubernetes.io/instance"
	require.NotEmpty(t, tmpl.Labels[instance], "%s: the rendered template has no %s label", where, instance)
	require.Equal(t, tmpl.Labels[instance], pod.Labels[instance], "%s: label %s", where, instance)
	for _, v := range tmpl.Spec.Volumes {
		i := slices.IndexFunc(pod.Spec.Volumes, func(pv corev1.Volume) bool { return pv.Name == v.Name })
		require.GreaterOrEqual(t, i, 0, "%s: volume %s is gone", where, v.Name)
		require.Equal(t, v, undefaulted(v, pod.Spec.Volumes[i]), "%s: volume %s", where, v.Name)
	}
	for _, tc := range tmpl.Spec.Containers {
		i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == tc.Name })
		require.GreaterOrEqual(t, i, 0, "%s: container %s is gone", where, tc.Name)
		pc := pod.Spec.Containers[i]
		require.Equal(t, tc.Resources.Claims, pc.Resources.Claims, "%s: container %s resources.claims", where, tc.Name)
		for _, m := range tc.VolumeMounts {
			require.Contains(t, pc.VolumeMounts, m, "%s: container %s lost the mount of %s at %s (subPath %q)", where, tc.Name, m.Name, m.MountPath, m.SubPath)
		}
	}
}

// undefaulted is the created Pod's volume without what the API server
// defaults when the rendered volume left it unset: a ConfigMap or Secret
// volume's defaultMode (0644).
func undefaulted(rendered, created corev1.Volume) corev1.Volume {
	out := *created.DeepCopy()
	if rendered.ConfigMap != nil && rendered.ConfigMap.DefaultMode == nil && out.ConfigMap != nil {
		out.ConfigMap.DefaultMode = nil
	}
	if rendered.Secret != nil && rendered.Secret.DefaultMode == nil && out.Secret != nil {
		out.Secret.DefaultMode = nil
	}
	return out
}
