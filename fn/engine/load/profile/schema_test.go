package profile

import (
	"encoding/json"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// TestInt: an integer or a numeric string, as pydantic's lax int reads it;
// a fraction or a word is refused.
func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"7", 7, ""}, {`" 7 "`, 7, ""}, {"7.0", 7, ""}, {"7e1", 70, ""}, {"-7", -7, ""},
		{"7.5", 0, "expected an integer, found 7.5"}, {`"seven"`, 0, `expected an integer, found "seven"`}, {"true", 0, "expected an integer, found true"},
	} {
		var i Int
		err := json.Unmarshal([]byte(tc.in), &i)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, i.Value(0), tc.in)
	}
	assert.Equal(t, int64(3), (*Int)(nil).Value(3), "unset is the default")
}

// TestSchedulerView: the integrations read the scheduler keys, the labels
// and every pod template of the clusters in role order at its field path,
// the deployments in name order, and whether a template names KAI.
func TestSchedulerView(t *testing.T) {
	q, prio := "lab", "high"
	tmpl := func(name string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: name}}
	}
	cluster := func(head, worker string) *Cluster {
		return &Cluster{Labels: map[string]string{"c": "1"}, Spec: &rayv1.RayClusterSpec{
			HeadGroupSpec:    rayv1.HeadGroupSpec{Template: tmpl(head)},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{Template: tmpl(worker)}},
		}}
	}
	for _, tc := range []struct {
		name      string
		infra     Infra
		fields    []string
		parts     []string
		namesKAI  bool
		admission string
	}{
		{"clusters in role order", Infra{Kuberay: Clusters{Training: cluster("", ""), Generation: &Cluster{}}},
			[]string{"kuberay.training.spec.headGroupSpec.template", "kuberay.training.spec.workerGroupSpecs[0].template"},
			[]string{"generation", "training"}, false, ""},
		{"a worker names KAI", Infra{Kuberay: Clusters{Gym: cluster("", vocab.KAISchedulerName)}},
			[]string{"kuberay.gym.spec.headGroupSpec.template", "kuberay.gym.spec.workerGroupSpecs[0].template"}, []string{"gym"}, true, ""},
		{"a head names KAI", Infra{Kuberay: Clusters{Training: cluster(vocab.KAISchedulerName, "")}},
			[]string{"kuberay.training.spec.headGroupSpec.template", "kuberay.training.spec.workerGroupSpecs[0].template"}, []string{"training"}, true, ""},
		{"a deployment names KAI; deployments by name", Infra{Deployments: map[string]*Deployment{
			"b": {Spec: &appsv1.DeploymentSpec{Template: tmpl(vocab.KAISchedulerName)}}, "a": {}, "nil": nil}},
			nil, []string{"a", "b"}, true, ""},
		{"Kueue alone admits", Infra{Scheduler: Scheduler{Kind: "kueue", Queue: &q, WorkloadPriorityClass: &prio}}, nil, nil, false, "lab high"},
		{"Kueue beside KAI admits", Infra{Scheduler: Scheduler{Kind: "kai", Queue: &prio, Kueue: &SchedulerKueue{Queue: q, WorkloadPriorityClass: &prio}}}, nil, nil, false, "lab high"},
		{"KAI alone admits nothing", Infra{Scheduler: Scheduler{Kind: "kai", Queue: &q}}, nil, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.infra.SchedulerView()
			var fields, parts []string
			for _, p := range append(append([]scheduler.Part(nil), v.Clusters...), v.Deployments...) {
				parts = append(parts, p.Name)
				for _, tp := range p.Templates {
					fields = append(fields, tp.Field)
				}
			}
			assert.Equal(t, tc.fields, fields)
			assert.Equal(t, tc.parts, parts)
			assert.Equal(t, tc.namesKAI, v.NamesKAI)
			queue, priority, ok := tc.infra.Scheduler.KueueAdmission()
			if assert.Equal(t, tc.admission != "", ok) && ok {
				assert.Equal(t, tc.admission, queue+" "+*priority)
			}
		})
	}
}

// TestView: the scheduler keys reach the integrations as they are written.
func TestView(t *testing.T) {
	d := "multikueue"
	s := Scheduler{Kind: "kai", Topology: &SchedulerTopology{Topology: "t", RequiredPlacement: "r", PreferredPlacement: "p"},
		Kueue: &SchedulerKueue{Queue: "q", Dispatch: &d}}
	v := s.View()
	assert.Equal(t, &scheduler.Topology{Topology: "t", RequiredPlacement: "r", PreferredPlacement: "p"}, v.Topology)
	assert.Equal(t, &scheduler.KueueBeside{Queue: "q", Dispatch: &d}, v.Kueue)
	assert.Equal(t, scheduler.Profile{Kind: "default"}, Scheduler{Kind: "default"}.View(), "no block, no view of it")
}
