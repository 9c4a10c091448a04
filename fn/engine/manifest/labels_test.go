package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// TestLabelPrecedence pins which layer wins, one case per rule of labels.go.
func TestLabelPrecedence(t *testing.T) {
	id := identity{instance: "sweep-a", owner: "alice", runID: "r1",
		labels: map[string]string{"team": "run", "app.kubernetes.io/instance": "from-run-labels"}}
	cases := []struct {
		name string
		got  map[string]string
		want map[string]string
	}{
		{"object: profile < own < run labels < extra < identity; defaults overridable",
			id.objectLabels(
				map[string]string{"team": "profile", "tier": "profile", vocab.ManagedByLabel: "custom"},
				map[string]string{"tier": "own", vocab.OwnerLabel: "bob"},
				map[string]string{"nemo-rl.nvidia.com/job": "training", "team": "extra"}),
			map[string]string{vocab.ManagedByLabel: "custom", vocab.PartOfLabel: vocab.PartOfValue, "team": "extra", "tier": "own",
				"nemo-rl.nvidia.com/job": "training", vocab.InstanceLabel: "sweep-a", vocab.OwnerLabel: "alice", vocab.RunIDLabel: "r1"}},
		{"pod: the template's own labels over profile and cluster, under the run's",
			id.podLabels(map[string]string{"x": "profile"}, map[string]string{"x": "cluster", "y": "cluster"},
				map[string]string{"y": "pod", "team": "pod"}),
			map[string]string{vocab.ManagedByLabel: vocab.ManagedByValue, vocab.PartOfLabel: vocab.PartOfValue, "x": "cluster", "y": "pod",
				"team": "run", vocab.InstanceLabel: "sweep-a", vocab.OwnerLabel: "alice", vocab.RunIDLabel: "r1"}},
		{"bare (DRA, Service): defaults, run labels, identity; no profile labels",
			id.bareLabels(),
			map[string]string{vocab.ManagedByLabel: vocab.ManagedByValue, vocab.PartOfLabel: vocab.PartOfValue, "team": "run",
				vocab.InstanceLabel: "sweep-a", vocab.OwnerLabel: "alice", vocab.RunIDLabel: "r1"}},
		{"no run id, no owner: no empty labels",
			identity{instance: "x"}.bareLabels(),
			map[string]string{vocab.ManagedByLabel: vocab.ManagedByValue, vocab.PartOfLabel: vocab.PartOfValue, vocab.InstanceLabel: "x"}},
		{"a Deployment's selector wins on its template",
			selectedWins(map[string]string{vocab.InstanceLabel: "svc", "app": "other"}, map[string]string{"app": "sandbox"}),
			map[string]string{vocab.InstanceLabel: "svc", "app": "sandbox"}},
		{"annotations: profile < own < run; pods get only the run's over their own",
			merged(identity{annotations: map[string]string{"a": "run"}}.objectAnnotations(map[string]string{"a": "p", "b": "p"}, map[string]string{"b": "own"}),
				identity{annotations: map[string]string{"c": "run"}}.podAnnotations(map[string]string{"c": "pod", "d": "pod"})),
			map[string]string{"a": "run", "b": "own", "c": "run", "d": "pod"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %v\nwant %v", tc.got, tc.want)
			}
		})
	}
	if got := (identity{}).podAnnotations(nil); got != nil {
		t.Errorf("no annotations must stay nil (pruned), got %v", got)
	}
}

func TestCheckRunMetadata(t *testing.T) {
	cases := []struct {
		name  string
		p     runparams.Params
		field string // "" for no error
	}{
		{"valid", runparams.Params{Run: runparams.Run{Name: "sweep-a", Labels: map[string]string{"example.com/team": "rl", "x": ""}, Annotations: map[string]string{"note": "any text"}}}, ""},
		{"bad label key", runparams.Params{Run: runparams.Run{Labels: map[string]string{"bad key": "v"}}}, "labels.bad key"},
		{"bad label value", runparams.Params{Run: runparams.Run{Labels: map[string]string{"k": "a b"}}}, "labels.k"},
		{"bad annotation key", runparams.Params{Run: runparams.Run{Annotations: map[string]string{"/x": "v"}}}, "annotations./x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := checkRunMetadata(tc.p)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].field != tc.field || !strings.Contains(errs[0].msg, "is invalid: ") {
				t.Fatalf("got %v; want an error at %s", errs, tc.field)
			}
		})
	}
}
