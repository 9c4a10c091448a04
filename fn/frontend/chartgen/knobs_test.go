package chartgen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
)

// knobCase is one per-run value: the chart values, the nrl-k8s render
// infra overrides they mean (written out by hand: the profile's own
// placement and env are part of the override, as a user would write it),
// and text the output must then hold (so a knob that silently does
// nothing on both sides fails).
type knobCase struct {
	name  string
	run   run
	wants []string
	nots  []string
}

// sameAsProfile are the cases whose value is the profile's own: the
// output does not change.
var sameAsProfile = map[string]bool{"suspend/false": true, "nodeSelector/the workers' own value": true}

func knobCases() []knobCase {
	h200 := func(mode runparams.Mode) run {
		return run{profile: "h200-research-16n8g", mode: mode, user: "ann", namespace: "team-a"}
	}
	generic := func(mode runparams.Mode) run {
		return run{profile: "generic-single-node-8gpu", mode: mode, user: "ann", namespace: "team-a"}
	}
	gb300 := func(mode runparams.Mode) run {
		return run{profile: "gb300-qwen3-30b-math-4n-4gpu", mode: mode, user: "ann", namespace: "team-a"}
	}
	with := func(r run, knobs map[string]any, infra ...string) run {
		r.knobs, r.infra = knobs, infra
		return r
	}
	withID := func(r run) run { r.runID = "e7"; return r }
	kueue := func(mode runparams.Mode) run {
		return run{profile: "h100-kueue-2n8g", mode: mode, user: "ann", namespace: "team-a"}
	}
	return []knobCase{
		{"queue/kueue", with(kueue(runparams.RayJob), map[string]any{"queue": "team-b-queue", "workloadPriorityClass": "team-high"},
			"infra.scheduler.queue=team-b-queue", "infra.scheduler.workloadPriorityClass=team-high"),
			[]string{"kueue.x-k8s.io/queue-name: team-b-queue", "kueue.x-k8s.io/priority-class: team-high"}, []string{"lab-queue", "kai.scheduler"}},
		{"queue/kueue raycluster", with(withID(kueue(runparams.RayCluster)), map[string]any{"queue": "team-b.queue"}, "infra.scheduler.queue=team-b.queue"),
			[]string{"kueue.x-k8s.io/queue-name: team-b.queue"}, []string{"lab-queue", "kueue.x-k8s.io/priority-class"}},
		{"queue/rayjob", with(h200(runparams.RayJob), map[string]any{"queue": "team-b"}, "infra.scheduler.queue=team-b"),
			[]string{"kai.scheduler/queue: team-b"}, []string{"kai.scheduler/queue: research"}},
		{"queue/raycluster", with(withID(h200(runparams.RayCluster)), map[string]any{"queue": "team-b"}, "infra.scheduler.queue=team-b"),
			[]string{"kai.scheduler/queue: team-b"}, []string{"kai.scheduler/queue: research"}},
		{"priorityClassName/rayjob", with(generic(runparams.RayJob), map[string]any{"priorityClassName": "research-high"}, "infra.scheduler.priorityClassName=research-high"),
			[]string{"priorityClassName: research-high"}, nil},
		{"priorityClassName/raycluster", with(withID(h200(runparams.RayCluster)), map[string]any{"priorityClassName": "rl.high"}, "infra.scheduler.priorityClassName=rl.high"),
			[]string{"priorityClassName: rl.high"}, nil},
		{"nodeSelector/no placement", with(generic(runparams.RayJob), map[string]any{"nodeSelector": map[string]any{"cloud.google.com/gke-nodepool": "a100-pool", "example.com/zone": "b"}},
			`infra.placement.nodeSelector={"cloud.google.com/gke-nodepool": "a100-pool", "example.com/zone": "b"}`),
			[]string{"cloud.google.com/gke-nodepool: a100-pool", "example.com/zone: b"}, nil},
		{"nodeSelector/with placement", with(h200(runparams.RayJob), map[string]any{"nodeSelector": map[string]any{"example.com/rack": "r1"}},
			`infra.placement.nodeSelector={"nvidia.com/gpu.product": "NVIDIA-H200", "example.com/rack": "r1"}`),
			[]string{"example.com/rack: r1", "nvidia.com/gpu.product: NVIDIA-H200"}, nil},
		{"nodeSelector/raycluster", with(gb300(runparams.RayCluster), map[string]any{"nodeSelector": map[string]any{"a-pool": "p"}}, `infra.placement.nodeSelector={a-pool: p}`),
			[]string{"a-pool: p"}, nil},
		{"nodeSelector/key the head has", with(gb300(runparams.RayJob), map[string]any{"nodeSelector": map[string]any{"nodeGroup": "gpu-pool"}}, `infra.placement.nodeSelector={nodeGroup: gpu-pool}`),
			[]string{"nodeGroup: gpu-pool", "nodeGroup: customer-cpu"}, nil},
		{"nodeSelector/the workers' own value", with(gb300(runparams.RayJob), map[string]any{"nodeSelector": map[string]any{"nvidia.com/gpu.product": "NVIDIA-GB300"}}, `infra.placement.nodeSelector={"nvidia.com/gpu.product": NVIDIA-GB300}`),
			[]string{"nvidia.com/gpu.product: NVIDIA-GB300"}, nil},
		{"tolerations/with placement", with(h200(runparams.RayJob), map[string]any{"tolerations": []any{map[string]any{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}}},
			`infra.placement.tolerations=[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, {key: example.com/maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 600}]`),
			[]string{"key: example.com/maintenance", "tolerationSeconds: 600"}, nil},
		{"tolerations/defaults", with(generic(runparams.RayJob), map[string]any{"tolerations": []any{map[string]any{"key": "dedicated", "value": "rl"}, map[string]any{"key": "a.example/b", "operator": "Exists"}}},
			`infra.placement.tolerations=[{key: dedicated, value: rl}, {key: a.example/b, operator: Exists}]`),
			[]string{"key: dedicated\n", "operator: Equal", "value: rl"}, nil},
		{"tolerations/raycluster", with(withID(gb300(runparams.RayCluster)), map[string]any{"tolerations": []any{map[string]any{"key": "spot", "effect": "PreferNoSchedule"}}},
			`infra.placement.tolerations=[{key: spot, effect: PreferNoSchedule}]`),
			[]string{"key: spot"}, nil},
		{"env/mapping", with(generic(runparams.RayJob), map[string]any{"env": map[string]any{"NCCL_DEBUG_SUBSYS": "INIT", "EXTRA": `a "b" <&>`, "EMPTY": ""}},
			`infra.env={"NCCL_DEBUG_SUBSYS": "INIT", "EXTRA": "a \"b\" <&>", "EMPTY": ""}`),
			[]string{"name: NCCL_DEBUG_SUBSYS\n", "value: a \"b\" <&>"}, nil},
		{"env/list", with(withID(gb300(runparams.RayCluster)), map[string]any{"env": []any{map[string]any{"name": "B_VAR", "value": "2"}, map[string]any{"name": "A_VAR"}}},
			`infra.env={B_VAR: "2", A_VAR: ""}`),
			[]string{"name: A_VAR\n", "name: B_VAR\n"}, nil},
		{"suspend", with(generic(runparams.RayJob), map[string]any{"suspend": true}, "infra.launch.rayjob.suspend=true"),
			[]string{"suspend: true"}, nil},
		{"suspend/false", with(generic(runparams.RayJob), map[string]any{"suspend": false}, "infra.launch.rayjob.suspend=false"),
			nil, []string{"suspend:"}},
		{"ttl/zero", with(generic(runparams.RayJob), map[string]any{"ttlSecondsAfterFinished": 0}, "infra.launch.rayjob.ttlSecondsAfterFinished=0"),
			nil, []string{"ttlSecondsAfterFinished"}},
		{"ttl/day", with(withID(h200(runparams.RayJob)), map[string]any{"ttlSecondsAfterFinished": 86400}, "infra.launch.rayjob.ttlSecondsAfterFinished=86400"),
			[]string{"ttlSecondsAfterFinished: 86400"}, []string{"ttlSecondsAfterFinished: 3600"}},
		{"all/h200", with(withID(h200(runparams.RayJob)), map[string]any{
			"queue": "team-b", "priorityClassName": "research-high", "nodeSelector": map[string]any{"example.com/rack": "r1"},
			"tolerations": []any{map[string]any{"key": "spot", "operator": "Exists"}}, "env": map[string]any{"NCCL_DEBUG": "INFO"},
			"suspend": true, "ttlSecondsAfterFinished": 60,
		}, "infra.scheduler.queue=team-b", "infra.scheduler.priorityClassName=research-high",
			`infra.placement.nodeSelector={"nvidia.com/gpu.product": "NVIDIA-H200", "example.com/rack": "r1"}`,
			`infra.placement.tolerations=[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, {key: spot, operator: Exists}]`,
			`infra.env={NCCL_DEBUG: INFO}`, "infra.launch.rayjob.suspend=true", "infra.launch.rayjob.ttlSecondsAfterFinished=60"),
			[]string{"kai.scheduler/queue: team-b", "priorityClassName: research-high", "example.com/rack: r1", "key: spot", "name: NCCL_DEBUG", "suspend: true", "ttlSecondsAfterFinished: 60"}, nil},
	}
}

// withShips is the all-knobs case on a shipped recipe, with labels and
// overrides: the knob substitution composes with every other one.
func withShips() knobCase {
	r := run{profile: "generic-single-node-8gpu", mode: runparams.RayJob, user: "ann", namespace: "team-a", runID: "e7",
		ships: shippedRecipes[0], overrides: twoOverrides, labels: map[string]string{"cost-center": "rl-42"}, image: "registry.example/nemo-rl:v2",
		knobs: map[string]any{"priorityClassName": "research-high", "nodeSelector": map[string]any{"pool": "a"},
			"tolerations": []any{map[string]any{"key": "spot", "operator": "Exists"}}, "env": map[string]any{"NCCL_DEBUG_SUBSYS": "INIT"},
			"suspend": true, "ttlSecondsAfterFinished": 0},
		infra: []string{"infra.scheduler.priorityClassName=research-high", `infra.placement.nodeSelector={pool: a}`,
			`infra.placement.tolerations=[{key: spot, operator: Exists}]`, `infra.env={NCCL_DEBUG_SUBSYS: INIT}`,
			"infra.launch.rayjob.suspend=true", "infra.launch.rayjob.ttlSecondsAfterFinished=0"},
	}
	return knobCase{"all/shipped recipe", r, []string{"priorityClassName: research-high", "pool: a", "key: spot", "name: NCCL_DEBUG_SUBSYS", "suspend: true"}, []string{"ttlSecondsAfterFinished"}}
}

// TestKnobParity: each per-run value renders exactly as nrl-k8s render with
// the infra override it stands for.
func TestKnobParity(t *testing.T) {
	c := loadChart(t)
	for _, tc := range append(knobCases(), withShips()) {
		t.Run(tc.name, func(t *testing.T) {
			want, msg, ok := engineRender(t, tc.run)
			require.True(t, ok, msg)
			got, notes, err := helmTemplate(c, tc.run.values(t), tc.run.namespace)
			require.NoError(t, err)
			require.Equal(t, want, stripSource(got))
			if tc.run.knobs["suspend"] == true {
				assert.Contains(t, notes, `Suspended (suspend=true): KubeRay creates no cluster and runs nothing until the RayJob is resumed:`)
				assert.Contains(t, notes, `--type merge -p '{"spec":{"suspend":false}}'`)
			} else {
				assert.NotContains(t, notes, "Suspended")
			}
			for _, w := range tc.wants {
				assert.Contains(t, got, w)
			}
			if q, ok := tc.run.knobs["queue"].(string); ok && strings.Contains(got, "kueue.x-k8s.io/queue-name") {
				assert.Contains(t, notes, "Kueue's LocalQueue "+q+":", "NOTES name the release's LocalQueue")
			}
			for _, n := range tc.nots {
				assert.NotContains(t, got, n)
			}
			// Without the values the knobs' text is gone: the assertions
			// above are about the values, not the profile.
			bare := tc.run
			bare.knobs, bare.infra = nil, nil
			plain, _, err := helmTemplate(c, bare.values(t), bare.namespace)
			require.NoError(t, err)
			if sameAsProfile[tc.name] {
				assert.Equal(t, plain, got)
			} else {
				assert.NotEqual(t, plain, got)
			}
		})
	}
}

// TestKnobBadValues: a bad per-run value fails with the value's path and
// what is expected; where nrl-k8s render has the same input (infra), it
// refuses it too.
func TestKnobBadValues(t *testing.T) {
	c := loadChart(t)
	for _, tc := range knobBadValues() {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := helmTemplate(c, tc.run.values(t), "default")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.engine {
				require.NotEmpty(t, tc.run.infra)
				_, msg, ok := engineRender(t, tc.run)
				assert.False(t, ok, "nrl-k8s render with %v must refuse it too", tc.run.infra)
				t.Log(strings.SplitN(msg, "\n", 2)[0])
			}
		})
	}
}

// knobBad is a bad per-run value and what the chart's message says.
type knobBad struct {
	name   string
	run    run
	want   string
	engine bool // nrl-k8s render with r.infra refuses it too
}

// knobBadValues are TestKnobBadValues' cases.
func knobBadValues() []knobBad {
	base := func(profile string, mode runparams.Mode, k string, v any, infra ...string) run {
		return run{profile: profile, mode: mode, user: "alice", namespace: "default", knobs: map[string]any{k: v}, infra: infra}
	}
	const (
		generic = "generic-single-node-8gpu"
		h200    = "h200-research-16n8g"
		gb300   = "gb300-qwen3-30b-math-4n-4gpu"
	)
	return []knobBad{
		{"queue on a profile without KAI", base(generic, runparams.RayJob, "queue", "team-b"),
			"at '/queue': value must be ''", false},
		{"Kueue queue not a LocalQueue name", base("h100-kueue-2n8g", runparams.RayJob, "queue", "Team_B", "infra.scheduler.queue=Team_B"),
			"at '/queue': 'Team_B' does not match pattern '^([a-z0-9]([-a-z0-9]*[a-z0-9])?", true},
		{"workload priority class on a profile without Kueue", base(h200, runparams.RayJob, "workloadPriorityClass", "high", "infra.scheduler.workloadPriorityClass=high"),
			"at '/workloadPriorityClass': value must be ''", true},
		{"Kueue LocalQueue beside KAI on a Kueue-only profile", base("h100-kueue-2n8g", runparams.RayJob, "kueueQueue", "team-b"),
			"at '/kueueQueue': value must be ''", false},
		{"Kueue LocalQueue on a KAI profile without Kueue", base(h200, runparams.RayJob, "kueueQueue", "team-b"),
			"at '/kueueQueue': value must be ''", false},
		{"Kueue LocalQueue not a name", base(h200, runparams.RayJob, "kueueQueue", "Team_B"), "at '/kueueQueue'", false},
		{"workload priority class not a name", base("h100-kueue-2n8g", runparams.RayJob, "workloadPriorityClass", "High", "infra.scheduler.workloadPriorityClass=High"), "at '/workloadPriorityClass'", true},
		{"workload priority class in dev mode", base("h100-kueue-2n8g", runparams.Dev, "workloadPriorityClass", "high"),
			"at '/workloadPriorityClass': value must be ''", false},
		{"Kueue queue as a label", run{profile: "h100-kueue-2n8g", mode: runparams.RayJob, user: "alice", namespace: "default", labels: map[string]string{"kueue.x-k8s.io/queue-name": "x"}},
			`nemo-rl-run: labels key "kueue.x-k8s.io/queue-name": Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the queue value, on a profile that names Kueue (scheduler.kind kueue, or scheduler.kueue beside KAI`, false},
		{"Kueue priority as a label without Kueue", run{profile: generic, mode: runparams.RayJob, user: "alice", namespace: "default", labels: map[string]string{"kueue.x-k8s.io/priority-class": "x"}},
			`labels key "kueue.x-k8s.io/priority-class": Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the workloadPriorityClass value`, false},
		{"queue in dev mode", base(h200, runparams.Dev, "queue", "team-b"), "at '/queue': value must be ''", false},
		{"queue not a label value", base(h200, runparams.RayJob, "queue", "team b", `infra.scheduler.queue=team b`), "at '/queue'", true},
		{"queue as a label", run{profile: h200, mode: runparams.RayJob, user: "alice", namespace: "default", labels: map[string]string{"kai.scheduler/queue": "x"}},
			`labels key "kai.scheduler/queue" is already set in the rendered objects (by the profile or the run identity); the chart adds keys, it does not replace them: use another key, or nrl-k8s render --label (for the queue: the queue value; for Kueue's LocalQueue beside KAI's queue: kueueQueue; for Kueue's priority class: the workloadPriorityClass value)`, false},
		{"reserved queue", base(h200, runparams.RayJob, "queue", chartgen.SentinelQueue), "are reserved", false},
		{"priority class not a name", base(generic, runparams.RayJob, "priorityClassName", "High", "infra.scheduler.priorityClassName=High"), "at '/priorityClassName'", true},
		{"priority class in dev mode", base(generic, runparams.Dev, "priorityClassName", "high"),
			"at '/priorityClassName': value must be ''", false},
		{"node selector key the profile sets", base(h200, runparams.RayJob, "nodeSelector", map[string]any{"nvidia.com/gpu.product": "NVIDIA-H100"}),
			`nodeSelector key "nvidia.com/gpu.product": the GPU workers already select NVIDIA-H200 (the profile's placement or pod specs)`, false},
		{"node selector key a worker's spec sets", base(gb300, runparams.RayJob, "nodeSelector", map[string]any{"nvidia.com/gpu.product": "NVIDIA-H100"}, `infra.placement.nodeSelector={"nvidia.com/gpu.product": NVIDIA-H100}`),
			`nodeSelector key "nvidia.com/gpu.product": the GPU workers already select NVIDIA-GB300`, true},
		{"node selector value", base(generic, runparams.RayJob, "nodeSelector", map[string]any{"pool": "a b"}, `infra.placement.nodeSelector={pool: a b}`), "at '/nodeSelector/pool'", true},
		{"node selector key", base(generic, runparams.RayJob, "nodeSelector", map[string]any{"-pool": "a"}, `infra.placement.nodeSelector={-pool: a}`), "'-pool' does not match pattern", true},
		{"toleration operator", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "operator": "In"}}, `infra.placement.tolerations=[{key: a, operator: In}]`),
			"at '/tolerations/0/operator'", true},
		{"toleration effect", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "effect": "NoRun"}}, `infra.placement.tolerations=[{key: a, effect: NoRun}]`),
			"at '/tolerations/0/effect'", true},
		{"toleration without key", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"operator": "Exists"}}, `infra.placement.tolerations=[{operator: Exists}]`),
			"at '/tolerations/0'", true},
		{"toleration value with Exists", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "operator": "Exists", "value": "v"}}, `infra.placement.tolerations=[{key: a, operator: Exists, value: v}]`),
			"at '/tolerations/0/value': maxLength: got 1, want 0", true},
		{"toleration seconds without NoExecute", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "tolerationSeconds": 30}}, `infra.placement.tolerations=[{key: a, tolerationSeconds: 30}]`),
			"at '/tolerations/0': missing property 'effect'", true},
		{"toleration seconds with effect NoSchedule", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "effect": "NoSchedule", "tolerationSeconds": 30}}, `infra.placement.tolerations=[{key: a, effect: NoSchedule, tolerationSeconds: 30}]`),
			"at '/tolerations/0/effect': value must be 'NoExecute'", true},
		{"toleration field", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a", "effects": "NoSchedule"}}), "at '/tolerations/0'", false},
		{"toleration the profile has", base(h200, runparams.RayJob, "tolerations", []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists"}}),
			`tolerations[0] {"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}: the GPU workers already carry it`, false},
		{"toleration twice", base(generic, runparams.RayJob, "tolerations", []any{map[string]any{"key": "a"}, map[string]any{"key": "a", "operator": "Equal"}}),
			"tolerations[1] {\"effect\":\"NoSchedule\",\"key\":\"a\",\"operator\":\"Equal\"} is listed twice", false},
		{"tolerations in dev mode", base(generic, runparams.Dev, "tolerations", []any{map[string]any{"key": "a"}}),
			"at '/tolerations': maxItems: got 1, want 0", false},
		{"node selector in dev mode", base(generic, runparams.Dev, "nodeSelector", map[string]any{"pool": "a"}), "at '/nodeSelector': maxProperties: got 1, want 0", false},
		{"env in dev mode", base(generic, runparams.Dev, "env", map[string]any{"A": "1"}), "at '/env': maxProperties: got 1, want 0", false},
		{"env list in dev mode", base(generic, runparams.Dev, "env", []any{map[string]any{"name": "A", "value": "1"}}), "at '/env': maxItems: got 1, want 0", false},
		{"env name", base(generic, runparams.RayJob, "env", map[string]any{"NCCL-DEBUG": "x"}, `infra.env={NCCL-DEBUG: x}`), "'NCCL-DEBUG' does not match pattern", true},
		{"env name in a list", base(generic, runparams.RayJob, "env", []any{map[string]any{"name": "1X", "value": "x"}}, `infra.env={1X: x}`), "at '/env/0/name'", true},
		{"env value not a string", base(generic, runparams.RayJob, "env", map[string]any{"N": 1}), "at '/env/N'", false},
		{"env a container sets", base(gb300, runparams.RayJob, "env", map[string]any{"NCCL_DEBUG": "INFO"}, `infra.env={NCCL_DEBUG: INFO}`),
			"env NCCL_DEBUG is already set in the run's containers (by the profile)", true},
		{"env twice", base(generic, runparams.RayJob, "env", []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"}}),
			"env[1]: A is listed twice", false},
		{"env secret", base(generic, runparams.RayJob, "env", map[string]any{"WANDB_API_KEY": "abc123"}, `infra.env={WANDB_API_KEY: abc123}`),
			"env.WANDB_API_KEY holds a literal value under a credential-looking name", true},
		{"env secret value", base(generic, runparams.RayJob, "env", map[string]any{"NOTE": "hf_abcdefghijklmnopqrstuvwxyz"}, `infra.env={NOTE: hf_abcdefghijklmnopqrstuvwxyz}`),
			"env.NOTE holds a Hugging Face token", true},
		{"env reserved", base(generic, runparams.RayJob, "env", map[string]any{"X": "a-" + chartgen.SentinelUser}), "are reserved", false},
		{"suspend not a bool", base(generic, runparams.RayJob, "suspend", "yes"), "at '/suspend'", false},
		{"suspend in raycluster mode", base(generic, runparams.RayCluster, "suspend", true),
			"at '/suspend': got boolean, want null", false},
		{"ttl negative", base(generic, runparams.RayJob, "ttlSecondsAfterFinished", -1, "infra.launch.rayjob.ttlSecondsAfterFinished=-1"), "at '/ttlSecondsAfterFinished'", true},
		{"ttl beyond int32", base(generic, runparams.RayJob, "ttlSecondsAfterFinished", int64(1)<<31, fmt.Sprintf("infra.launch.rayjob.ttlSecondsAfterFinished=%d", int64(1)<<31)),
			"at '/ttlSecondsAfterFinished'", true},
		{"ttl not an integer", base(generic, runparams.RayJob, "ttlSecondsAfterFinished", 1.5), "at '/ttlSecondsAfterFinished'", false},
		{"ttl in raycluster mode", base(generic, runparams.RayCluster, "ttlSecondsAfterFinished", 60), "at '/ttlSecondsAfterFinished': got number, want null", false},
	}
}

// TestKnobsRealHelm: the pinned Helm 3 and Helm 4 CLIs render every knob
// case to nrl-k8s render's bytes (values from a file, as -f passes them:
// booleans, integers and dotted keys keep their type), and refuse bad ones.
func TestKnobsRealHelm(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	for env, bin := range clis {
		t.Run(env, func(t *testing.T) {
			for _, tc := range append(knobCases(), withShips()) {
				want, msg, ok := engineRender(t, tc.run)
				require.True(t, ok, msg)
				out, errOut, err := helmCmd(t, bin, cliArgs(t, tc.run)...)
				require.NoError(t, err, "%s: %s", tc.name, errOut)
				assert.Equal(t, want, stripSource(out), tc.name)
			}
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "queue=team-b"}, "at '/queue': value must be ''"},
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "ttlSecondsAfterFinished=-5"}, "ttlSecondsAfterFinished"},
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "mode=raycluster", "--set", "suspend=true"}, "at '/suspend': got boolean, want null"},
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "priorityClassName=Bad_Name"}, "priorityClassName"},
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "tolerations[0].key=a", "--set", "tolerations[0].operator=In"}, "operator"},
				{[]string{"--set", "profile=generic-single-node-8gpu", "--set", "user=a", "--set", "env.HF_TOKEN=hf_x"}, "env.HF_TOKEN holds a literal value under a credential-looking name"},
			} {
				_, errOut, err := helmCmd(t, bin, append([]string{"template", "r", chartDir, "--kube-version", "1.34.0"}, tc.args...)...)
				require.Error(t, err, tc.args)
				assert.Contains(t, errOut, tc.want)
			}
		})
	}
}

// TestCredentialRulesCopy: the chart's copy of fn/analyse/secrets' Name and Value
// (its rules come from Go through files/profiles.json) refuses exactly
// what they flag, for the env value.
func TestCredentialRulesCopy(t *testing.T) {
	c := loadChart(t)
	render := func(name, value string) error {
		vals := map[string]any{"profile": "generic-single-node-8gpu", "user": "alice", "env": map[string]any{name: value}}
		_, _, err := helmTemplate(c, vals, "default")
		return err
	}
	for _, name := range []string{"HF_TOKEN", "WANDB_API_KEY", "wandb_api_key", "GITHUB_PAT", "DB_PASS", "DB_PASSWORD", "HF_AUTH", "SSH_KEY", "NGC_KEY",
		"AWS_SECRET_ACCESS_KEY", "MY_APIKEY", "PRIVATE_KEY_X", "TOKENIZER_PATH", "KEY_PATH", "PATH", "PASSTHROUGH", "NUM_TOKENS", "HFTOKEN", "CREDS_FILE", "X"} {
		err := render(name, "literal-1")
		if secrets.Name(name) {
			require.Error(t, err, name)
			assert.Contains(t, err.Error(), "env."+name+" holds a literal value under a credential-looking name", name)
			// A reference is not a literal: it is expanded in the pod.
			assert.NoError(t, render(name, "$(OTHER)"), name)
		} else {
			assert.NoError(t, err, name)
		}
	}
	for _, v := range []string{"AKIAABCDEFGHIJKLMNOP", "ghp_abcdefghijklmnopqrstuvwxyz", "hf_abcdefghijklmnopqrstuvwxyz", "nvapi-abcdefghijklmnopqrstuvwxyz",
		"sk-abcdefghijklmnopqrstuvwxyz", "xoxb-1234567890-abc", "-----BEGIN RSA PRIVATE KEY-----", "https://user:pw@host/x", "https://user:$(PW)@host/x",
		"plain", "hf_short", "https://host/x"} {
		err := render("NOTE", v)
		if kind, ok := secrets.Value(v); ok {
			require.Error(t, err, v)
			assert.Contains(t, err.Error(), "env.NOTE holds "+kind, v)
		} else {
			assert.NoError(t, err, v)
		}
	}
}
