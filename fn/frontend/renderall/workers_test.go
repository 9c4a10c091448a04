package renderall_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
)

// A committed worker bundle is judged as a manifest is, and one a run no
// longer renders (not dispatched, or stopped on the manager's side) is
// Elsewhere: render-all removes it.
func TestCompareWorkers(t *testing.T) {
	bundle := []byte("---\nkind: ConfigMap\nmetadata:\n  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n")
	other := []byte("---\nkind: ConfigMap\nmetadata:\n  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n  name: x\n")
	res := &renderall.Result{
		Runs:    []string{"dispatched", "failed", "moved", "new", "plain", "removed"},
		Files:   map[string][]byte{"dispatched": []byte("---\nkind: RayJob\n"), "moved": {}, "new": {}, "plain": []byte("---\nkind: RayJob\n")},
		Workers: map[string][]byte{"dispatched": other, "moved": bundle, "new": bundle},
		Removed: map[string]bool{"removed": true},
	}
	committed := map[string][]byte{"dispatched": bundle, "failed": bundle, "moved": bundle, "plain": bundle, "removed": bundle, "gone": bundle}
	got := map[string]renderall.Change{}
	for _, d := range renderall.CompareWorkers("manifests/workers", committed, res) {
		assert.Equal(t, "manifests/workers/"+d.Run+".yaml", d.File)
		got[d.Run] = d.Change
	}
	assert.Equal(t, map[string]renderall.Change{
		"dispatched": renderall.Stale,     // its bundle changed
		"new":        renderall.Missing,   // dispatched, nothing committed
		"plain":      renderall.Elsewhere, // no longer dispatched
		"removed":    renderall.Gone,
		"gone":       renderall.Orphan, // no run of that name
	}, got, "failed keeps its file; moved is unchanged")
}

// A run's whole render is its manifest and then its bundle, the same join
// for a committed tree, so equal trees compare equal byte for byte.
func TestJoinAll(t *testing.T) {
	cases := []struct {
		name               string
		manifests, workers map[string][]byte
		want               map[string][]byte
	}{
		{"no bundles", map[string][]byte{"a": []byte("A")}, nil, map[string][]byte{"a": []byte("A")}},
		{"a dispatched run", map[string][]byte{"a": []byte("A"), "b": []byte("B")}, map[string][]byte{"a": []byte("W")},
			map[string][]byte{"a": []byte("AW"), "b": []byte("B")}},
		{"a stopped dispatched run: its bundle alone", map[string][]byte{}, map[string][]byte{"a": []byte("W")}, map[string][]byte{"a": []byte("W")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, renderall.JoinAll(tc.manifests, tc.workers))
		})
	}
	res := &renderall.Result{Files: map[string][]byte{"a": []byte("A")}, Workers: map[string][]byte{"a": []byte("W")}}
	assert.Equal(t, "AW", string(res.Whole("a")))
}

// Deleting a run file is refused while the base's manager build or its
// workers' build still lists something: a stopped dispatched run has an
// empty manager build and a bundle on every worker.
func TestUnremovedReadsTheWorkersBuild(t *testing.T) {
	cases := []struct {
		name            string
		manager, worker []byte
		refused         bool
	}{
		{"removed: both empty", renderall.FluxBuild("r", true), renderall.FluxWorkersBuild("r", false), false},
		{"stopped and dispatched: the bundle is listed", renderall.FluxBuild("r", true), renderall.FluxWorkersBuild("r", true), true},
		{"not dispatched, running", renderall.FluxBuild("r", false), nil, true},
		{"not dispatched, removed", renderall.FluxBuild("r", true), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{"r/kustomization.yaml": tc.manager, "r/workers/kustomization.yaml": tc.worker}
			base := renderall.Base{FluxRuns: []string{"r"}, FluxBuild: func(file string) ([]byte, error) { return files[file], nil }}
			runs, err := renderall.Unremoved(base, &renderall.Result{})
			require.NoError(t, err)
			assert.Equal(t, tc.refused, len(runs) == 1, "%v", runs)
		})
	}
}
