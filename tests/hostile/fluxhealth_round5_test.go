package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fluxapply"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// fluxEvaluators are the shipped Kustomization's healthCheckExprs per kind,
// as kustomize-controller evaluates them (fluxcd/pkg/runtime/cel).
func fluxEvaluators(t *testing.T) map[string]*fluxcel.StatusEvaluator {
	t.Helper()
	file := filepath.Join(testenv.RepoRoot(t), "gitops", "flux", "kustomization.yaml")
	evs, err := fluxapply.HealthChecks([]byte(testenv.ReadFile(t, file)))
	require.NoError(t, err)
	out := map[string]*fluxcel.StatusEvaluator{}
	for _, kind := range []string{"RayJob", "RayCluster"} {
		require.Contains(t, evs, "ray.io/v1/"+kind)
		out[kind] = evs["ray.io/v1/"+kind]
	}
	return out
}

// The Flux health expressions hold what the Argo CD checks hold, on the
// same generated objects: an evaluation never errors on any JSON a hostile
// or older CRD can store (kustomize-controller then reports the health
// check itself as failed), and Current (Flux's Ready) is said only of a
// success or of a run its spec stops.
func TestFluxHealthGenerated(t *testing.T) {
	evs := fluxEvaluators(t)
	g := &gen{r: rand.New(rand.NewPCG(11, 2026)), mib: strings.Repeat("x\x1b\n日", 64<<10/7)}
	seen := map[string]bool{}
	failures := 0
	for i := 0; i < 1500 && failures < 10; i++ {
		obj := g.object()
		kind := obj["kind"].(string)
		check := map[string]string{"RayJob": jobCheck, "RayCluster": clusterCheck}[kind]
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		if u.UnmarshalJSON(b) != nil {
			continue // the API server would not store it: not an object Flux reads
		}
		r, err := evs[kind].Evaluate(context.Background(), u)
		if err == nil && r.Status == status.CurrentStatus && !fluxSucceeded(check, obj) && !stoppedBySpec(obj) {
			err = errCurrent
		}
		if err != nil {
			failures++
			t.Errorf("case %d, %s: %v\nobject (first 2000 bytes): %.2000s", i, kind, err, b)
			continue
		}
		seen[kind+" "+string(r.Status)] = true
	}
	for _, kind := range []string{"RayJob", "RayCluster"} {
		for _, want := range []status.Status{status.CurrentStatus, status.InProgressStatus, status.FailedStatus} {
			require.True(t, seen[kind+" "+string(want)], "no generated case gave %s %s", kind, want)
		}
	}
}

// fluxSucceeded is succeeded as CEL's exists() reads conditions: any
// entry of the type, not the first of them among the first ListMax (the
// two differ only on a list holding one type twice, which KubeRay never
// writes).
func fluxSucceeded(check string, obj map[string]any) bool {
	if check == jobCheck {
		return succeeded(check, obj)
	}
	anyTrue := func(typ string) bool {
		list, _ := at(obj, "status", "conditions").([]any)
		for _, c := range list {
			if at(c, "type") == typ && at(c, "status") == "True" {
				return true
			}
		}
		return false
	}
	state := text(obj, "status", "state")
	failed := state == "failed" || anyTrue("ReplicaFailure")
	return (state == "ready" || anyTrue("RayClusterProvisioned")) && !failed
}

var errCurrent = errors.New("current (Ready) for an object that neither succeeded nor is stopped by its spec")
