// Package apiserver_test asks a real kube-apiserver (with KubeRay's and the
// ComputeDomain CRDs installed) whether it admits what nrl-k8s renders:
// every golden output, every example output and a fresh render of every
// shipped profile in every mode go through a server-side dry-run apply.
// The binaries come from hack/apiserver.sh (`make apiserver-test`); see
// internal/apiserver for when a missing server skips and when it fails.
package apiserver_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunThenStop(m, "the API server", apiserver.StopShared))
}

// admitAll dry-run applies every object of every run and reports each
// rejection with the server's message. It returns how many objects of each
// kind were admitted.
func admitAll(t *testing.T, srv *apiserver.Server, runs []fixtures.Run) map[string]int {
	t.Helper()
	ctx := context.Background()
	kinds := map[string]int{}
	for _, r := range runs {
		t.Run(r.Name, func(t *testing.T) {
			require.NotEmpty(t, r.Objs, "no objects")
			for _, u := range r.Objs {
				if ns := u.GetNamespace(); ns != "" {
					require.NoError(t, srv.EnsureNamespace(ctx, ns))
				}
				if err := srv.DryRunApply(ctx, u); err != nil {
					t.Errorf("rejected: %v", err)
					continue
				}
				kinds[u.GetKind()]++
			}
		})
	}
	t.Logf("admitted: %v", kinds)
	return kinds
}

// Every golden output: tests/golden/*/expected/*.yaml.
func TestGoldenOutputsAreAdmitted(t *testing.T) {
	srv := apiserver.Shared(t)
	kinds := admitAll(t, srv, fixtures.Committed(t, "tests/golden/*/expected/*.yaml"))
	// The goldens hold every kind we render, so each is judged.
	for _, k := range []string{"RayJob", "RayCluster", "ComputeDomain", "ResourceClaimTemplate", "Deployment", "Service", "Pod"} {
		require.NotZero(t, kinds[k], "no golden %s was admitted", k)
	}
}

// Every example's output: the committed runs repository, and the outputs
// the KRM function's golden tests pin for examples/kustomize (krusty) and
// examples/kpt (the items of the ResourceList kpt gets back that it would
// write, i.e. all but the local-config inputs).
func TestExampleOutputsAreAdmitted(t *testing.T) {
	srv := apiserver.Shared(t)
	runs := fixtures.Committed(t, "examples/runs-repo/manifests/*.yaml")
	runs = append(runs, fixtures.Committed(t, "fn/frontend/krm/testdata/krusty/expected.yaml")...)
	objs, err := fixtures.Decode(kptOutput(t))
	require.NoError(t, err)
	runs = append(runs, fixtures.Run{Name: "examples/kpt (fn/frontend/krm/testdata/kpt-package)", Objs: objs})
	admitAll(t, srv, runs)
}

func kptOutput(t *testing.T) []byte {
	t.Helper()
	f := filepath.Join(testenv.RepoRoot(t), "fn/frontend/krm/testdata/kpt-package/.expected/output.yaml")
	var rl struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(testenv.ReadFile(t, f)), &rl))
	var stream []byte
	for _, it := range rl.Items {
		u := unstructured.Unstructured{Object: it}
		if u.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		b, err := yaml.Marshal(it)
		require.NoError(t, err)
		stream = append(append(stream, "---\n"...), b...)
	}
	require.NotEmpty(t, stream, "%s has no rendered items", f)
	return stream
}

// The shipped profiles (profiles/index.yaml, which internal/fixtures'
// TestShipped holds to every profile under profiles/) rendered now by the
// engine, in every mode.
func TestShippedProfileRendersAreAdmitted(t *testing.T) {
	srv := apiserver.Shared(t)
	var runs []fixtures.Run
	for _, p := range fixtures.Shipped(t) {
		for _, mode := range runparams.Modes {
			runs = append(runs, fixtures.Run{Name: p.Name + "/" + string(mode), Objs: fixtures.Objects(t, fixtures.Request(p, fixtures.As(mode)))})
		}
	}
	admitAll(t, srv, runs)
}

// One defect per case (with several, which one the server reports first is
// not stable), each in a copy of a golden object the server admits: the
// server refuses it with the expected status, naming the field.
func TestServerRejectsBadOutput(t *testing.T) {
	srv := apiserver.Shared(t)
	byKind := map[string]*unstructured.Unstructured{}
	for _, g := range fixtures.Goldens(t, "*") {
		for _, u := range g.Objs {
			if _, ok := byKind[u.GetKind()]; !ok {
				byKind[u.GetKind()] = u
			}
		}
	}
	cases := []struct {
		name, kind string
		edit       func(t *testing.T, o map[string]any)
		// What the server answers: SSA's typed patch refuses a CRD
		// object off its schema with a bare 500 (no reason), built-in
		// validation and CEL rules with 422 Invalid.
		code   int32
		reason metav1.StatusReason
		msg    []string // all in the server's message
	}{
		{"unknown field", "RayJob", func(t *testing.T, o map[string]any) {
			set(t, o, "python x.py", "spec", "entryPoint")
		}, http.StatusInternalServerError, "", []string{".spec.entryPoint: field not declared in schema"}},
		{"wrong type", "RayCluster", func(t *testing.T, o map[string]any) {
			set(t, o, "yes", "spec", "enableInTreeAutoscaling")
		}, http.StatusInternalServerError, "", []string{".spec.enableInTreeAutoscaling: expected boolean"}},
		// A CEL rule of the CRD, which fn/analyse/schema's offline walk does not
		// evaluate.
		{"CRD validation rule", "RayJob", func(t *testing.T, o map[string]any) {
			set(t, o, map[string]any{"onSuccess": map[string]any{"policy": "DeleteCluster"}}, "spec", "deletionStrategy")
		}, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, []string{"spec.deletionStrategy: Invalid value", "deletionStrategy requires either BOTH onSuccess and onFailure"}},
		{"pod-level nvidia.com/gpu", "Pod", func(t *testing.T, o map[string]any) {
			set(t, o, map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(8)}}, "spec", "resources")
		}, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, []string{`spec.resources.limits[nvidia.com/gpu]: Unsupported value`}},
		{"claim request without deviceClassName", "ResourceClaimTemplate", func(t *testing.T, o map[string]any) {
			reqs, _, err := unstructured.NestedSlice(o, "spec", "spec", "devices", "requests")
			require.NoError(t, err)
			require.NotEmpty(t, reqs)
			delete(reqs[0].(map[string]any)["exactly"].(map[string]any), "deviceClassName")
			set(t, o, reqs, "spec", "spec", "devices", "requests")
		}, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, []string{"spec.spec.devices.requests[0].exactly.deviceClassName: Required value"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, ok := byKind[tc.kind]
			require.True(t, ok, "no golden %s", tc.kind)
			if ns := base.GetNamespace(); ns != "" {
				require.NoError(t, srv.EnsureNamespace(ctx, ns))
			}
			u := base.DeepCopy()
			require.NoError(t, srv.DryRunApply(ctx, u), "the unedited object is admitted")
			tc.edit(t, u.Object)
			err := srv.DryRunApply(ctx, u)
			require.Error(t, err, "the server admitted the bad object")
			var st apierrors.APIStatus
			require.True(t, errors.As(err, &st), "not an API status: %v", err)
			s := st.Status()
			t.Logf("%d %s: %s", s.Code, s.Reason, s.Message)
			require.Equal(t, tc.code, s.Code, s.Message)
			require.Equal(t, tc.reason, s.Reason, s.Message)
			for _, m := range tc.msg {
				require.Contains(t, s.Message, m)
			}
		})
	}
}

func set(t *testing.T, o map[string]any, v any, path ...string) {
	t.Helper()
	require.NoError(t, unstructured.SetNestedField(o, v, path...))
}

// The version the harness looks for is the one hack/apiserver.sh builds
// and hack/apiserver/go.mod pins.
func TestAssetVersionIsPinnedOnce(t *testing.T) {
	root := testenv.RepoRoot(t)
	script := testenv.ReadFile(t, filepath.Join(root, "hack/apiserver.sh"))
	require.Contains(t, script, "\nversion="+apiserver.Version+" ")
	gomod := testenv.ReadFile(t, filepath.Join(root, "hack/apiserver/go.mod"))
	require.True(t, slices.ContainsFunc(strings.Split(gomod, "\n"), func(l string) bool {
		return strings.TrimSpace(l) == "k8s.io/kubernetes "+apiserver.Version+" // indirect"
	}), "hack/apiserver/go.mod does not require k8s.io/kubernetes %s", apiserver.Version)
}

// The kubeconfig the harness writes (what a CLI under test would get)
// reaches the same server: a namespace created through the harness is seen.
func TestKubeconfigReachesTheServer(t *testing.T) {
	srv := apiserver.Shared(t)
	ctx := context.Background()
	require.NoError(t, srv.EnsureNamespace(ctx, "kubeconfig-check"))
	file, err := srv.WriteKubeconfig(t.TempDir())
	require.NoError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", file)
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ns := &corev1.Namespace{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "kubeconfig-check"}, ns))
}
