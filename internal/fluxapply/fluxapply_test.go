package fluxapply

import (
	"context"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	rayJob = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"}
	cm     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

// The stale objects of a reconcile are what the last inventory held and
// the new one does not, by group, kind, namespace and name (not version).
func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, next []ref
		want      []string
	}{
		{"same", []ref{{rayJob, "ns", "a"}}, []ref{{rayJob, "ns", "a"}}, nil},
		{"removed", []ref{{rayJob, "ns", "a"}, {cm, "ns", "a"}}, []ref{{cm, "ns", "a"}}, []string{"RayJob/a"}},
		{"other version", []ref{{rayJob, "ns", "a"}}, []ref{{rayJob.GroupKind().WithVersion("v2"), "ns", "a"}}, nil},
		{"other namespace", []ref{{rayJob, "ns", "a"}}, []ref{{rayJob, "other", "a"}}, []string{"RayJob/a"}},
		{"empty build", []ref{{rayJob, "ns", "a"}, {cm, "ns", "b"}}, nil, []string{"ConfigMap/b", "RayJob/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, u := range diff(tc.old, tc.next) {
				got = append(got, u.GetKind()+"/"+u.GetName())
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

// What a prune could not delete stays in the inventory; what it deleted
// or skipped (an opt-out) does not.
func TestSurvivors(t *testing.T) {
	stale := objectsOf([]ref{{rayJob, "ns", "a"}, {cm, "ns", "b"}, {cm, "ns", "c"}})
	set := ssa.NewChangeSet()
	set.Add(ssa.ChangeSetEntry{ObjMetadata: object.ObjMetadata{GroupKind: rayJob.GroupKind(), Namespace: "ns", Name: "a"}, Action: ssa.DeletedAction})
	set.Add(ssa.ChangeSetEntry{ObjMetadata: object.ObjMetadata{GroupKind: cm.GroupKind(), Namespace: "ns", Name: "b"}, Action: ssa.SkippedAction})
	got := survivors(stale, set)
	require.Len(t, got, 1)
	assert.Equal(t, "c", got[0].name)
	assert.Len(t, survivors(stale, nil), 3)
}

// Finalize with Orphan, or MirrorPrune without prune, deletes nothing
// (and needs no cluster); an unknown policy is an error naming the field.
func TestFinalizePolicy(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		prune        bool
		err          string
	}{
		{"orphan", Orphan, true, ""},
		{"mirror prune without prune", MirrorPrune, false, ""},
		{"default without prune", "", false, ""},
		{"unknown", "Keep", true, `spec.deletionPolicy "Keep": expected one of MirrorPrune, Delete, Orphan`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := New(nil, Spec{Name: "r", Namespace: "flux-system", Prune: tc.prune, DeletionPolicy: tc.policy})
			k.inventory = []ref{{rayJob, "ns", "r"}}
			cs, err := k.Finalize(context.Background())
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Nil(t, cs)
			assert.Empty(t, k.Inventory(), "the Kustomization is gone, and its inventory with it")
		})
	}
}
