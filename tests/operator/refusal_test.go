package operator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// The server runs with a cluster's admission, which envtest switches off:
// a Pod naming a ServiceAccount that does not exist is refused, and a
// namespace's pod-security.kubernetes.io/enforce label is enforced.
func TestClusterAdmissionIsOn(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	pod := func(ns, sa string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
			Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
	}
	require.NoError(t, env.CreateNamespace(ctx, "admission-sa", ""))
	err := env.Client.Create(ctx, pod("admission-sa", "missing"))
	require.ErrorContains(t, err, `error looking up service account admission-sa/missing`)
	require.NoError(t, env.Client.Create(ctx, pod("admission-sa", "default")), "CreateNamespace creates the default ServiceAccount")

	require.NoError(t, env.CreateNamespace(ctx, "admission-restricted", "restricted"))
	err = env.Client.Create(ctx, pod("admission-restricted", "default"))
	require.ErrorContains(t, err, `violates PodSecurity "restricted:latest"`)
}

// A render whose Pods KubeRay cannot create fails with the refusal named:
// KubeRay's Event and the API server's reason.
func TestRefusalsAreNamed(t *testing.T) {
	env := operator.Shared(t)
	gb300 := fixtures.Shipped(t)[0]
	require.Equal(t, "gb300-qwen3-30b-math-4n-4gpu", gb300.Name)
	objs := fixtures.Objects(t, fixtures.Request(gb300, fixtures.As(runparams.RayCluster)))
	cases := []struct {
		name string
		// edit changes the run; sa says whether its ServiceAccount is
		// created first.
		edit func(t *testing.T, objs []*unstructured.Unstructured)
		sa   bool
		want []string
	}{
		// KubeRay creates the head first and stops at its refusal.
		{"missing ServiceAccount", nil, false, []string{
			"FailedToCreateHeadPod",
			"error looking up service account", "nemo-rl-endpoint-registry",
		}},
		{"pod claim with no source", claimWithoutSource, true, []string{
			"FailedToCreateWorkerPod", "spec.resourceClaims[2]", "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
		}},
		// What fn/engine/check's container-claim rule refuses before apply (the
		// disaggregated golden once rendered it).
		{"container claim naming no pod claim", containerClaimWithoutPodClaim, true, []string{
			"FailedToCreateWorkerPod", "spec.containers[0].resources.claims[2]", `Not found: "ib"`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := fixtures.NamespaceFor("refused-" + tc.name)
			run := make([]*unstructured.Unstructured, len(objs))
			for i, o := range objs {
				run[i] = o.DeepCopy()
			}
			if tc.edit != nil {
				tc.edit(t, run)
			}
			require.NoError(t, env.CreateNamespace(ctx, ns, ""))
			if tc.sa {
				sas, _ := fixtures.References(run)
				for _, sa := range sas {
					require.NoError(t, env.CreateServiceAccount(ctx, ns, sa))
				}
			}
			require.NoError(t, env.Apply(ctx, ns, run), "the API server admits the RayCluster itself")
			var cluster string
			for _, o := range run {
				if o.GetKind() == "RayCluster" {
					cluster = o.GetName()
					break
				}
			}
			_, err := env.WaitForCluster(ctx, ns, cluster, createTimeout)
			require.Error(t, err)
			refused, ok := operator.AsRefused(err)
			require.True(t, ok, "not a refusal: %v", err)
			t.Logf("%v", refused)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// claimWithoutSource adds a pod claim with neither resourceClaimName nor
// resourceClaimTemplateName to the first worker group, used by its
// container: the RayCluster is admitted, every worker Pod is refused.
func claimWithoutSource(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	editFirstWorker(t, objs, func(spec map[string]any) {
		claims := spec["resourceClaims"].([]any)
		require.Len(t, claims, 2, "the GB300 worker has two claims; the new one is resourceClaims[2]")
		spec["resourceClaims"] = append(claims, map[string]any{"name": "ib"})
		c := spec["containers"].([]any)[0].(map[string]any)
		res := c["resources"].(map[string]any)
		res["claims"] = append(res["claims"].([]any), map[string]any{"name": "ib"})
	})
}

// containerClaimWithoutPodClaim adds to the first worker group's container
// a claim its pod does not declare: every worker Pod is refused.
func containerClaimWithoutPodClaim(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	editFirstWorker(t, objs, func(spec map[string]any) {
		c := spec["containers"].([]any)[0].(map[string]any)
		res := c["resources"].(map[string]any)
		require.Len(t, res["claims"], 2, "the GB300 worker's container has two claims; the new one is claims[2]")
		res["claims"] = append(res["claims"].([]any), map[string]any{"name": "ib"})
	})
}

// editFirstWorker applies edit to the pod spec of the run's RayCluster's
// first worker group.
func editFirstWorker(t *testing.T, objs []*unstructured.Unstructured, edit func(spec map[string]any)) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "RayCluster" {
			continue
		}
		groups, _, err := unstructured.NestedSlice(o.Object, "spec", "workerGroupSpecs")
		require.NoError(t, err)
		require.NotEmpty(t, groups)
		spec := groups[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		edit(spec)
		require.NoError(t, unstructured.SetNestedSlice(o.Object, groups, "spec", "workerGroupSpecs"))
		return
	}
	t.Fatal("no RayCluster in the run")
}
