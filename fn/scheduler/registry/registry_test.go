package registry

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

type errs []string

func (e *errs) Errorf(field, format string, args ...any) {
	*e = append(*e, field+": "+fmt.Sprintf(format, args...))
}

func TestKinds(t *testing.T) {
	require.Equal(t, []string{"kai", "kueue", "default"}, Kinds(), "scheduler.kind's enumeration, in the profile schema's order")
	_, ok := Of("volcano")
	require.False(t, ok)
	for _, k := range Kinds() {
		s, ok := Of(k)
		require.True(t, ok, k)
		require.Equal(t, k, s.Kind())
	}
}

// Each integration judges its own keys, whichever kind is selected, in
// registry order.
func TestValidate(t *testing.T) {
	q := func(s string) *string { return &s }
	cases := []struct {
		name string
		p    scheduler.Profile
		want []string
	}{
		{name: "default needs no queue", p: scheduler.Profile{Kind: "default"}},
		{name: "kai needs a queue", p: scheduler.Profile{Kind: "kai"},
			want: []string{"scheduler.queue: infra.scheduler.queue is required when scheduler.kind=kai"}},
		{name: "kai's queue is a label value", p: scheduler.Profile{Kind: "kai", Queue: q("a b")},
			want: []string{`scheduler.queue: found "a b"; expected a queue name usable as the label value of kai.scheduler/queue: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{name: "KAI's topology under kueue, then Kueue's own keys", p: scheduler.Profile{Kind: "kueue", Queue: q("lab"), Suspend: true,
			Topology: &scheduler.Topology{Topology: "t", RequiredPlacement: "rack"}},
			want: []string{
				`scheduler.topology: is set but scheduler.kind is "kueue"; expected kind kai (KAI's pod-grouper is what reads it); with Kueue admitting, keep kind kai and name the LocalQueue in scheduler.kueue.queue`,
				"launch.rayjob.suspend: is true but scheduler.kind is kueue; expected false (unset): Kueue's webhook suspends the RayJob when it is created and unsuspends it on admission, while a suspend: true kept in Git sets spec.suspend again on every later apply of the same manifests, and KubeRay then deletes the admitted run's cluster",
			}},
		{name: "Kueue beside KAI names its LocalQueue", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{}},
			want: []string{"scheduler.kueue.queue: is empty; expected the LocalQueue in the run's namespace that admits the run"}},
		{name: "scheduler.kueue needs kind kai", p: scheduler.Profile{Kind: "default", Kueue: &scheduler.KueueBeside{Queue: "lab"}},
			want: []string{`scheduler.kueue: is set but scheduler.kind is "default"; expected kind kai (scheduler.kueue is Kueue's admission beside KAI's placement); for Kueue alone write scheduler: {kind: kueue, queue: Q}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got errs
			Validate(c.p, &got)
			require.Equal(t, errs(c.want), got)
		})
	}
}
