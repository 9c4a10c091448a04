// Package scheduling_test is the scheduling tier: every shipped profile and
// golden run is applied to the real kube-apiserver, KubeRay v1.5.0's
// reconcilers create its Pods (internal/operator), and the real
// kube-scheduler v1.36.3 (internal/scheduler) places them on a fleet shaped
// like the profile's target, allocating their DRA claims from the devices
// the fleet publishes. It asserts where the Pods go, and that a run the
// fleet cannot hold stays Pending with the scheduler's own reason; one test
// per scheduling finding shows what the scheduler does with our output.
package scheduling_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the scheduling tier", scheduler.StopShared))
}

// bindTimeout bounds each wait for the scheduler: generous for 2 shared
// cores, short enough that a stuck run fails with what it waited for.
const bindTimeout = 60 * time.Second

// renderRun renders shipped profile p in rayjob mode as run name.
func renderRun(t *testing.T, p chartgen.Entry, name string, overrides ...string) fixtures.Run {
	t.Helper()
	run := fixtures.As(runparams.RayJob)
	run.Name = name
	return fixtures.Run{Name: name, Objs: fixtures.Objects(t, fixtures.Request(p, run, overrides...))}
}

// goldenRuns are the golden rayjob-mode outputs, but for the cases that
// render a shipped profile (their run.yaml names ../profiles/): those are
// the shipped renders under another name, and binding them twice doubles
// the fleet's pods for no new placement.
func goldenRuns(t *testing.T) []fixtures.Run {
	t.Helper()
	var out []fixtures.Run
	for _, g := range fixtures.Goldens(t, "rayjob") {
		// A run MultiKueue dispatches is placed on a worker (tests/multicluster).
		if !strings.Contains(testenv.ReadFile(t, filepath.Join(g.Dir, "run.yaml")), "/profiles/") && !fixtures.Dispatched(g.Objs) {
			out = append(out, fixtures.Run{Name: "golden-" + g.Case, Objs: g.Objs})
		}
	}
	return out
}

// namespaceFor is the run's namespace, apart from the operator tier's.
func namespaceFor(name string) string { return fixtures.NamespaceFor("s-" + name) }

// apply sets ns up for the run and applies it (scheduler.Prepare).
func apply(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	require.NoError(t, scheduler.Prepare(context.Background(), env, ns, objs))
}

// waitScheduled is Scheduler.WaitScheduled, bounded by bindTimeout.
func waitScheduled(t *testing.T, env *operator.Env, s *scheduler.Scheduler, ns string, total, pending int) []corev1.Pod {
	t.Helper()
	pods, err := s.WaitScheduled(context.Background(), env, ns, total, pending, bindTimeout)
	require.NoError(t, err)
	return pods
}

// expectedPods is how many Pods KubeRay creates for the run's RayJobs: the
// head and every worker group's replicas × numOfHosts.
func expectedPods(t *testing.T, objs []*unstructured.Unstructured) (int, map[string]int) {
	t.Helper()
	total, gpuByProduct := 0, map[string]int{}
	for _, u := range objs {
		if u.GetKind() != "RayJob" {
			continue
		}
		j := fixtures.Typed[rayv1.RayJob](t, u.Object)
		if j.Spec.RayClusterSpec == nil {
			continue
		}
		total++
		for _, g := range j.Spec.RayClusterSpec.WorkerGroupSpecs {
			n := int(*g.Replicas) * int(max(g.NumOfHosts, 1))
			total += n
			gpuByProduct[g.Template.Spec.NodeSelector["nvidia.com/gpu.product"]] += n
		}
	}
	return total, gpuByProduct
}

func racksFor(pods int) int { return int(math.Ceil(float64(pods) / 18)) }
