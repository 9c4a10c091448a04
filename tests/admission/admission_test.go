// Package admission makes the consumers of our output its judges: KubeRay's
// own admission code (controllers/ray/utils, the functions its operator runs
// before acting on an object) and apimachinery's object metadata rules.
//
// The engine restates KubeRay's rules (fn/engine/check/kuberay.go: linking KubeRay's
// package into the CLI costs every process ~11 ms of package init). Here
// KubeRay's code is linked and decides: everything we render must pass it,
// and our restatement must refuse exactly what it refuses.
package admission

import (
	"fmt"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/stretchr/testify/require"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// manifest is one rendered object and where it came from.
type manifest struct {
	origin string
	data   map[string]any
}

// committedOutputs: every golden output and every example's committed
// manifests.
func committedOutputs(t *testing.T) []manifest {
	var out []manifest
	for _, glob := range []string{"tests/golden/*/expected/*.yaml", "examples/runs-repo/manifests/*.yaml"} {
		for _, r := range fixtures.Committed(t, glob) {
			for i, u := range r.Objs {
				out = append(out, manifest{origin: fmt.Sprintf("%s#%d", r.Name, i), data: u.Object})
			}
		}
	}
	return out
}

// shippedRenders renders every profile the repository ships (profiles/index.yaml)
// in every mode, with and without a run id.
func shippedRenders(t *testing.T) []manifest {
	var out []manifest
	for _, p := range fixtures.Shipped(t) {
		for _, mode := range runparams.Modes {
			for _, runID := range []string{"", "r42"} {
				run := fixtures.As(mode)
				run.RunID = runID
				origin := fmt.Sprintf("%s/%s/run-id=%q", p.Name, mode, runID)
				for _, d := range fixtures.Render(t, fixtures.Request(p, run)) {
					out = append(out, manifest{origin: origin + "/" + d.Kind + "/" + d.Name, data: d.Data})
				}
			}
		}
	}
	return out
}

// kubeRay runs KubeRay's own validation on a RayJob or RayCluster.
func kubeRay(obj any) error {
	switch o := obj.(type) {
	case *rayv1.RayJob:
		if err := rayutils.ValidateRayJobMetadata(o.ObjectMeta); err != nil {
			return err
		}
		return rayutils.ValidateRayJobSpec(o)
	case *rayv1.RayCluster:
		if err := rayutils.ValidateRayClusterMetadata(o.ObjectMeta); err != nil {
			return err
		}
		return rayutils.ValidateRayClusterSpec(&o.Spec, o.Annotations)
	}
	return nil
}

// metadataErrors is apimachinery's validation of an object's metadata:
// name per kind, namespace, labels, annotations (size included).
func metadataErrors(data map[string]any) field.ErrorList {
	u := &unstructured.Unstructured{Object: data}
	nameRule := apivalidation.NameIsDNSSubdomain
	switch u.GetKind() {
	case "Service", "RayJob", "RayCluster":
		nameRule = apivalidation.NameIsDNS1035Label
	}
	errs := apivalidation.ValidateObjectMetaAccessor(u, true, nameRule, field.NewPath("metadata"))
	return append(errs, metav1validation.ValidateLabels(u.GetLabels(), field.NewPath("metadata", "labels"))...)
}

// The bar: every object of every golden, example and shipped-profile render
// passes KubeRay's admission code and apimachinery's metadata rules.
func TestEverythingWeRenderIsAdmitted(t *testing.T) {
	all := append(committedOutputs(t), shippedRenders(t)...)
	counts := map[string]int{}
	for _, m := range all {
		kind, _ := m.data["kind"].(string)
		counts[kind]++
		require.Empty(t, metadataErrors(m.data), m.origin)
		var obj any
		switch kind {
		case "RayJob":
			obj = fixtures.Typed[rayv1.RayJob](t, m.data)
		case "RayCluster":
			obj = fixtures.Typed[rayv1.RayCluster](t, m.data)
		default:
			continue
		}
		require.NoError(t, kubeRay(obj), m.origin)
		require.Empty(t, check.KubeRayRules(obj), m.origin)
	}
	// The corpus really holds both kinds, from both modes.
	require.Greater(t, counts["RayJob"], 10)
	require.Greater(t, counts["RayCluster"], 5)
}

// base renders the qwen3 profile in one mode and returns its first object of
// the kind.
func base[T any](t testing.TB, mode runparams.Mode, kind string) *T {
	for _, d := range fixtures.Render(t, fixtures.Request(fixtures.Shipped(t)[0], fixtures.As(mode))) {
		if d.Kind == kind {
			return fixtures.Typed[T](t, d.Data)
		}
	}
	t.Fatalf("no %s in the %s render", kind, mode)
	return nil
}

// differential asserts that our restatement and KubeRay agree on obj.
func differential(t *testing.T, what string, obj any) (refused bool) {
	t.Helper()
	theirs := kubeRay(obj)
	ours := check.KubeRayRules(obj)
	require.Equal(t, theirs != nil, len(ours) > 0, "%s: KubeRay says %v; we say %v", what, theirs, ours)
	return theirs != nil
}

// Each mutation breaks (or, for the accepted ones, exercises without
// breaking) one KubeRay rule; ours must agree with KubeRay on every one.
func TestOurKubeRayRulesRefuseExactlyWhatKubeRayRefuses(t *testing.T) {
	t.Run("RayJob with rayClusterSpec", func(t *testing.T) {
		for _, m := range jobMutations {
			job := base[rayv1.RayJob](t, runparams.RayJob, "RayJob")
			m.apply(job)
			require.Equal(t, m.refused, differential(t, m.name, job), m.name)
		}
		for _, m := range clusterMutations {
			job := base[rayv1.RayJob](t, runparams.RayJob, "RayJob")
			m.apply(job.Spec.RayClusterSpec, &job.ObjectMeta)
			require.Equal(t, m.refused, differential(t, m.name, job), m.name)
		}
	})
	t.Run("RayJob with clusterSelector", func(t *testing.T) {
		for _, m := range jobMutations {
			job := base[rayv1.RayJob](t, runparams.RayCluster, "RayJob")
			require.NotEmpty(t, job.Spec.ClusterSelector)
			m.apply(job)
			differential(t, m.name, job)
		}
	})
	t.Run("RayCluster", func(t *testing.T) {
		for _, m := range clusterMutations {
			c := base[rayv1.RayCluster](t, runparams.RayCluster, "RayCluster")
			m.apply(&c.Spec, &c.ObjectMeta)
			require.Equal(t, m.refused, differential(t, m.name, c), m.name)
		}
	})
}

// The objects check.Output validates are also what emit writes: a round
// trip keeps the verdict (no field the encoder drops would have been
// refused).
func TestVerdictSurvivesEmit(t *testing.T) {
	job := base[rayv1.RayJob](t, runparams.RayCluster, "RayJob")
	job.Spec.TTLSecondsAfterFinished = 3600
	docs, err := emit.Convert([]any{job})
	require.NoError(t, err)
	ds := check.Output("p.infra.yaml", docs)
	require.True(t, ds.HasErrors())
	require.Contains(t, ds.Err().Error(), "ttlSecondsAfterFinished")
	require.Error(t, kubeRay(fixtures.Typed[rayv1.RayJob](t, docs[0].Data)))
}
