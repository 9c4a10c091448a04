package flux_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Every object gitops/flux ships is admitted by the real API server with
// Flux's own CRDs (testdata/crds, tagged releases) installed, in a
// dry-run create with strict field validation: a field those releases do
// not have (a HelmRelease-only field on a Kustomization, a field only an
// unreleased controller has), a misspelt one or a wrong type is refused.
// A Kustomization with driftDetection, the one that shipped before, is
// refused, which shows the check can fail.
func TestShippedFluxObjectsAdmitted(t *testing.T) {
	env, _ := kueue.Shared(t)
	ctx := context.Background()
	installCRDs(t, env.Server.Client, env.Server.Config)
	root := testenv.RepoRoot(t)
	var objs []*unstructured.Unstructured
	for _, f := range []string{"kustomization.yaml", "helmrelease.yaml"} {
		got, err := fixtures.Decode([]byte(testenv.ReadFile(t, filepath.Join(root, "gitops", "flux", f))))
		require.NoError(t, err, f)
		objs = append(objs, got...)
	}
	require.Len(t, objs, 3, "the Kustomization, the OCIRepository and the HelmRelease")
	for _, o := range objs {
		if o.GetNamespace() != "" {
			if err := env.CreateNamespace(ctx, o.GetNamespace(), "baseline"); !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "namespace %s", o.GetNamespace())
			}
		}
		require.NoError(t, dryRun(ctx, env.Server.Client, o), "%s %s", o.GetKind(), o.GetName())
	}

	bad := objs[0].DeepCopy()
	require.Equal(t, "Kustomization", bad.GetKind())
	require.NoError(t, unstructured.SetNestedField(bad.Object, map[string]any{"mode": "disabled"}, "spec", "driftDetection"))
	err := dryRun(ctx, env.Server.Client, bad)
	require.Error(t, err, "a HelmRelease field on a Kustomization was admitted")
	assert.Contains(t, err.Error(), "driftDetection")
}

func dryRun(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	return c.Create(ctx, o.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict"))
}

// installCRDs applies testdata/crds' CRDs server-side and waits until they
// are served.
func installCRDs(t *testing.T, c client.Client, cfg *rest.Config) {
	t.Helper()
	dir := filepath.Join("testdata", "crds")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.UnmarshalStrict(b, &crd), e.Name())
		crds = append(crds, &crd)
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(b, &u.Object), e.Name())
		err = c.Create(context.Background(), u)
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, e.Name())
		}
	}
	require.Len(t, crds, 3)
	require.NoError(t, envtest.WaitForCRDs(cfg, crds, envtest.CRDInstallOptions{PollInterval: 100 * time.Millisecond, MaxTime: time.Minute}))
}
