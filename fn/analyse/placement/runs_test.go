package placement

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

// RunsOf: one run per object, a RayJob's head and workers together (KAI's
// gang when Gangs has one without an error, each pod set with its
// subgroup's minMember and required level), its submitter and a
// Deployment's pods runs of their own.
func TestRunsOf(t *testing.T) {
	pg := kai.PodGroup{MinMember: 3, Topology: kai.Constraint{Topology: "t", Required: "rack"}, SubGroups: []kai.SubGroup{
		{Name: "headgroup", Index: -1, MinMember: 1}, {Name: "gpu", MinMember: 2, Topology: kai.Constraint{Topology: "t", Required: "clique"}}}}
	set := func(object, role string, count int64) Shape {
		return Shape{Pod: workload.Pod{Object: object, Namespace: "a", Role: role, Count: count}}
	}
	shapes := []Shape{set("RayJob/j", "head", 1), set("RayJob/j", "worker group gpu", 4), set("RayJob/j", "submitter", 1), set("Deployment/d", "pod", 2)}
	type run struct {
		name     string
		gang     bool
		required string
		sets     []string
		index    []int
	}
	cases := []struct {
		name  string
		gangs map[string]Gang
		want  []run
	}{
		{name: "KAI's gang", gangs: map[string]Gang{"a/RayJob/j": {PodGroup: pg}}, want: []run{
			{"RayJob/j", true, "rack", []string{"RayJob/j head 1/1 ", "RayJob/j worker group gpu 4/2 clique"}, []int{0, 1}},
			{"RayJob/j", false, "", []string{"RayJob/j submitter 1/0 "}, []int{2}},
			{"Deployment/d", false, "", []string{"Deployment/d pod 2/0 "}, []int{3}}}},
		{name: "a PodGroup KAI refuses is no gang", gangs: map[string]Gang{"a/RayJob/j": {Err: errors.New("no topology")}}, want: []run{
			{"RayJob/j", false, "", []string{"RayJob/j head 1/0 ", "RayJob/j worker group gpu 4/0 "}, []int{0, 1}},
			{"RayJob/j", false, "", []string{"RayJob/j submitter 1/0 "}, []int{2}},
			{"Deployment/d", false, "", []string{"Deployment/d pod 2/0 "}, []int{3}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs, index := RunsOf(shapes, c.gangs)
			var got []run
			for i, r := range runs {
				g := run{name: r.Name, gang: r.Gang, required: r.Required, index: index[i]}
				for _, s := range r.Shapes {
					g.sets = append(g.sets, s.Name()+" "+strconv.FormatInt(s.Count, 10)+"/"+strconv.FormatInt(s.MinMember, 10)+" "+s.Required)
				}
				got = append(got, g)
			}
			require.Equal(t, c.want, got)
		})
	}
}
