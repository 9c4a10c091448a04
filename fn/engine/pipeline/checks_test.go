package pipeline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// A small valid profile; each case edits it with a string replacement.
const goodProfile = `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: |
    python examples/run_grpo.py --config r.yaml cluster.num_nodes=2
kuberay:
  training:
    name: ${user:}-c
    segmentSize: 2
    spec:
      headGroupSpec:
        template:
          spec:
            nodeSelector: {nodeGroup: cpu}
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 2
          template:
            metadata:
              annotations: {kai.scheduler/topology: t, kai.scheduler/topology-required-placement: nvidia.com/gpu.clique}
            spec:
              tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
              resourceClaims: [{name: compute-domain-channel}]
              containers:
                - name: ray-worker
                  env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}]
                  resources: {limits: {nvidia.com/gpu: "4"}}
scheduler: {kind: kai, queue: q}
`

const goodRecipe = `cluster:
  gpus_per_node: 4
  num_nodes: 1
policy:
  megatron_cfg: {enabled: false}
  dtensor_cfg: {enabled: true}
  optimizer: {kwargs: {foreach: false, fused: false}}
`

type finding struct{ sev, file, field, msg string }

func run(t *testing.T, profile, rec string, overrides []string, mode runparams.Mode) diag.List {
	t.Helper()
	src := source.Memory{"p.infra.yaml": []byte(profile), "r.yaml": []byte(rec)}
	res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{
		Recipe:    "r.yaml",
		Profile:   "p.infra.yaml",
		Overrides: overrides,
		Run:       fixtures.As(mode),
	})
	return res.Diags
}

// Clean: no error, no warning; the one note is the Pod Security level its
// pods need (no securityContext: baseline).
func TestGoodProfileIsClean(t *testing.T) {
	for _, m := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		ds := run(t, goodProfile, goodRecipe, nil, m)
		require.Len(t, ds, 2, "%v", ds)
		for _, d := range ds {
			require.Equal(t, diag.Info, d.Severity, "%v", d)
		}
		require.Contains(t, ds[0].Message, "KAI schedules")
		require.Contains(t, ds[0].Message, "a PodGroup of 3 pods, all or nothing")
		require.Equal(t, "podSecurity", ds[1].Field)
		require.Contains(t, ds[1].Message, "need Pod Security baseline")
	}
}

// badInputCase is one bad input and the finding it must give.
type badInputCase struct {
	name      string
	profile   [][2]string // replacements in goodProfile
	recipe    string
	overrides []string
	want      finding
}

// badInputCases holds one bad input per check, each pinned to its file, field
// and message.
var badInputCases = []badInputCase{
	{"gpus per node mismatch", nil, strings.Replace(goodRecipe, "gpus_per_node: 4", "gpus_per_node: 8", 1), nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[*].resources.limits[nvidia.com/gpu]",
			`found 4 GPUs per worker in group "gpu" (every container's nvidia.com/gpu); expected 8, the recipe's cluster.gpus_per_node (set by r.yaml)`}},
	{"more nodes than workers", [][2]string{{"cluster.num_nodes=2", "cluster.num_nodes=3"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[*].replicas",
			`the training cluster provides 2 GPU nodes (replicas clamped to [minReplicas, maxReplicas] × numOfHosts, as KubeRay starts them); expected at least 3, the recipe's cluster.num_nodes (set by entrypoint override "cluster.num_nodes=3"): Ray would wait forever for the missing nodes`}},
	{"fewer nodes than workers", nil, goodRecipe, []string{"cluster.num_nodes=1"},
		finding{"warning", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[*].replicas",
			`the training cluster provides 2 GPU nodes but the recipe's cluster.num_nodes is 1 (set by run override "cluster.num_nodes=1"): 1 nodes will sit idle`}},
	{"replicas not divisible by segmentSize", [][2]string{{"replicas: 2", "replicas: 3"}, {"cluster.num_nodes=2", "cluster.num_nodes=3"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].replicas",
			`line 19: found 3 replicas in group "gpu"; expected a multiple of segmentSize=2 (kuberay.training.segmentSize)`}},
	{"unknown codeSource", [][2]string{{"codeSource: image", "codeSource: git"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "launch.codeSource", `line 3: found "git"; expected one of upload, image, lustre`}},
	{"unknown submitter", [][2]string{{"launch:\n", "submit: {submitter: ssh}\nlaunch:\n"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "submit.submitter", `line 2: found "ssh"; expected one of portForward, exec`}},
	{"unknown launch mode", [][2]string{{"launch:\n", "launch:\n  mode: KAI\n"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "launch.mode", `line 3: found "KAI"; expected one of single, rayjob, attach, bringup`}},
	{"image without codePath", [][2]string{{"  codePath: /opt/nemo-rl\n", ""}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "launch.codePath", `infra.launch.codePath is required when codeSource=image`}},
	{"inlined secret", [][2]string{{"{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}", "{name: HF_TOKEN, value: hf_abc123}"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[0].env[0] (HF_TOKEN)",
			"holds a literal value under a credential-looking name; expected valueFrom.secretKeyRef (or envFrom.secretRef) so the secret is referenced, never embedded"}},
	{"inlined secret in launch.env", [][2]string{{"  codeSource: image\n", "  codeSource: image\n  env: {WANDB_API_KEY: abc}\n"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "launch.env.WANDB_API_KEY",
			"line 4: holds a literal value under a credential-looking name; expected valueFrom.secretKeyRef (or envFrom.secretRef) so the secret is referenced, never embedded"}},
	{"hand-set ephemeral-storage", [][2]string{{`{limits: {nvidia.com/gpu: "4"}}`, `{limits: {nvidia.com/gpu: "4", ephemeral-storage: 10Gi}}`}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.ephemeral-storage",
			"line 29: is set by hand; expected it unset: the cluster's admission webhook injects ephemeral-storage"}},
	{"hand-set readinessProbe", [][2]string{{"containers: [{name: ray-head}]", "containers: [{name: ray-head, readinessProbe: {exec: {command: [cat, /tmp/ready]}}}]"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.headGroupSpec.template.spec.containers[0].readinessProbe",
			"line 16: is set by hand; expected it unset: the cluster's admission webhook injects the Ray readiness probe"}},
	{"megatron and dtensor", nil, strings.Replace(goodRecipe, "megatron_cfg: {enabled: false}", "megatron_cfg: {enabled: true}", 1), nil,
		finding{"error", "r.yaml", "policy.megatron_cfg.enabled",
			"found policy.megatron_cfg.enabled=true (set by r.yaml) together with policy.dtensor_cfg.enabled=true (set by r.yaml); expected exactly one training backend"}},
	{"megatron optimizer deletion", [][2]string{{"cluster.num_nodes=2", "cluster.num_nodes=2 ~policy.optimizer.kwargs.foreach"}},
		strings.Replace(strings.Replace(goodRecipe, "megatron_cfg: {enabled: false}", "megatron_cfg: {enabled: true}", 1), "dtensor_cfg: {enabled: true}", "dtensor_cfg: {enabled: false}", 1), nil,
		finding{"error", "p.infra.yaml", "policy.optimizer.kwargs.foreach",
			`override "~policy.optimizer.kwargs.foreach" deletes a key Megatron's optimizer needs (it crashes at start-up); expected no deletion on a Megatron recipe (policy.megatron_cfg.enabled=true)`}},
	{"unresolvable profile interpolation", [][2]string{{"name: ${user:}-c", "name: ${kuberay.training.nme}"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.name", `cannot resolve "${kuberay.training.nme}": interpolation key 'kuberay.training.nme' not found`}},
	{"unresolvable recipe interpolation", nil, goodRecipe + "x: ${policy.nope}\n", nil,
		finding{"error", "r.yaml", "x", `cannot resolve "${policy.nope}": interpolation key 'policy.nope' not found`}},
	{"worker without tolerations", [][2]string{{"tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", "tolerations: []"}}, goodRecipe, nil,
		finding{"warning", "p.infra.yaml", "output RayJob/alice-c spec.rayClusterSpec.workerGroupSpecs[0].template.spec.tolerations",
			`worker group "gpu" requests 4 GPUs per pod and its rendered pods have no tolerations; expected tolerations for the GPU nodes' taints (placement.tolerations adds them to every GPU worker), or its pods stay Pending on tainted GPU nodes`}},
	{"DRA without KAI topology", [][2]string{{"annotations: {kai.scheduler/topology: t, kai.scheduler/topology-required-placement: nvidia.com/gpu.clique}", "annotations: {}"}}, goodRecipe, nil,
		finding{"warning", "p.infra.yaml", "output RayJob/alice-c spec.rayClusterSpec.workerGroupSpecs[0].template.metadata.annotations",
			`worker group "gpu" claims a ComputeDomain spanning nodes but has no kai.scheduler/topology annotation; expected KAI topology so the workers land in one NVLink domain`}},
	{"head on GPU nodes", [][2]string{{"nodeSelector: {nodeGroup: cpu}", "nodeSelector: {nvidia.com/gpu.product: NVIDIA-GB300}"}}, goodRecipe, nil,
		finding{"warning", "p.infra.yaml", "output RayJob/alice-c spec.rayClusterSpec.headGroupSpec.template.spec.nodeSelector.nvidia.com/gpu.product",
			"the head pod selects GPU nodes; expected a CPU node group (the head runs no GPU work)"}},
	{"unknown key", [][2]string{{"image: img:1", "image: img:1\nimagePullSecret: [a]"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "imagePullSecret", `line 2: unknown key; did you mean "imagePullSecrets"?`}},
	{"unknown key nothing is close to", [][2]string{{"image: img:1", "image: img:1\ncolour: blue"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "colour", "line 2: unknown key; not part of the infra schema (or of the KubeRay/Kubernetes type at this path)"}},
	{"typo inside the RayCluster spec", [][2]string{{"groupName: gpu", "groupName: gpu\n          replica: 2"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].replica", `line 19: unknown key; did you mean "replicas"?`}},
	{"label value not a string", [][2]string{{"image: img:1", "image: img:1\nlabels: {a: 1}"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "labels", "line 2: found a number; expected a string"}},
	{"segmentSize zero", [][2]string{{"segmentSize: 2", "segmentSize: 0"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "kuberay.training.segmentSize", "line 10: found 0; expected an integer greater than 0"}},
	{"empty image", [][2]string{{"image: img:1", "image: ''"}}, goodRecipe, nil,
		finding{"error", "p.infra.yaml", "image", "line 1: must not be empty; expected a container image reference"}},
	{"priority class not a name", nil, goodRecipe, []string{"infra.scheduler.priorityClassName=High_Prio"},
		finding{"error", "p.infra.yaml", "scheduler.priorityClassName", `set by override "infra.scheduler.priorityClassName=High_Prio": found "High_Prio"; expected a PriorityClass name (DNS-1123 subdomain): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
	{"pod names another priority class", [][2]string{{"nodeSelector: {nodeGroup: cpu}", "nodeSelector: {nodeGroup: cpu}\n            priorityClassName: low"}}, goodRecipe, []string{"infra.scheduler.priorityClassName=high"},
		finding{"error", "p.infra.yaml", "kuberay.training.spec.headGroupSpec.template.spec.priorityClassName", `line 16: is "low" but scheduler.priorityClassName is "high"; expected one priority class`}},
	{"env name not a shell name", nil, goodRecipe, []string{"infra.env={NCCL-DEBUG: INFO}"},
		finding{"error", "p.infra.yaml", "env.NCCL-DEBUG", `set by override "infra.env={NCCL-DEBUG: INFO}": is not a shell variable name; expected ^[A-Za-z_][A-Za-z0-9_]*$`}},
	{"env a container sets", [][2]string{{"env: [{name: HF_TOKEN,", "env: [{name: NCCL_DEBUG, value: WARN}, {name: HF_TOKEN,"}}, goodRecipe, []string{"infra.env={NCCL_DEBUG: INFO}"},
		finding{"error", "p.infra.yaml", "kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[0].env", "line 28: already sets NCCL_DEBUG; expected env.NCCL_DEBUG to add a variable, not to replace one (set it in one place)"}},
	{"inlined secret in env", nil, goodRecipe, []string{"infra.env={WANDB_API_KEY: abc}"},
		finding{"error", "p.infra.yaml", "env.WANDB_API_KEY",
			`set by override "infra.env={WANDB_API_KEY: abc}": holds a literal value under a credential-looking name; expected valueFrom.secretKeyRef (or envFrom.secretRef) so the secret is referenced, never embedded`}},
	{"suspend without shutdown", nil, goodRecipe, []string{"infra.launch.rayjob.suspend=true", "infra.launch.rayjob.shutdownAfterJobFinishes=false", "infra.launch.rayjob.ttlSecondsAfterFinished=0"},
		finding{"error", "p.infra.yaml", "output RayJob/alice-c", "KubeRay would reject it: spec.suspend needs spec.shutdownAfterJobFinishes: true"}},
	{"override of a missing key", nil, goodRecipe, []string{"cluster.gpus=8"},
		finding{"error", "r.yaml", "cluster.gpus", `override "cluster.gpus=8": key 'cluster.gpus' is not in the recipe; use +cluster.gpus=... to add it`}},
}

// One bad input per check, each pinned to its file, field and message.
func TestEveryCheckReportsFileFieldAndExpectation(t *testing.T) {
	for _, tc := range badInputCases {
		t.Run(tc.name, func(t *testing.T) {
			p := goodProfile
			for _, r := range tc.profile {
				require.Contains(t, p, r[0], "replacement anchor")
				p = strings.Replace(p, r[0], r[1], 1)
			}
			ds := run(t, p, tc.recipe, tc.overrides, runparams.RayJob)
			var got []finding
			for _, d := range ds {
				got = append(got, finding{string(d.Severity), d.File, d.Field, d.Message})
			}
			require.Contains(t, got, tc.want)
		})
	}
}

// The embedded defaults are parsed once per process; a profile merged over
// them must not leak into the next run's defaults.
func TestProfileDefaultsAreNotSharedBetweenRuns(t *testing.T) {
	mountPath := func(profile string) any {
		src := source.Memory{"p.infra.yaml": []byte(profile), "r.yaml": []byte(goodRecipe)}
		res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{
			Recipe:  "r.yaml",
			Profile: "p.infra.yaml",
			Run:     fixtures.As(runparams.RayJob),
		})
		require.NotNil(t, res.Profile, "%v", res.Diags)
		ws, _ := res.Profile.Tree.Get("workspace")
		v, _ := ws.(*tree.Map).Get("mountPath")
		return v
	}
	require.Equal(t, "/elsewhere", mountPath(goodProfile+"workspace: {mountPath: /elsewhere}\n"))
	require.Equal(t, "/mnt/nemo-rl", mountPath(goodProfile))
}

// The per-run keys: scheduler.priorityClassName and env on every Ray pod
// (every container), launch.rayjob.suspend on the RayJob.
func TestRunPodKeys(t *testing.T) {
	src := source.Memory{"p.infra.yaml": []byte(goodProfile), "r.yaml": []byte(goodRecipe)}
	res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{
		Recipe:    "r.yaml",
		Profile:   "p.infra.yaml",
		Overrides: []string{"infra.scheduler.priorityClassName=research-high", "infra.env={NCCL_DEBUG: INFO, A_FIRST: '1'}", "infra.launch.rayjob.suspend=true"},
		Run:       fixtures.As(runparams.RayJob),
	})
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	var job map[string]any
	for _, d := range res.Docs {
		if d.Kind == "RayJob" {
			job = d.Data
		}
	}
	require.NotNil(t, job)
	spec := job["spec"].(map[string]any)
	require.Equal(t, true, spec["suspend"])
	cs := spec["rayClusterSpec"].(map[string]any)
	pods := []any{cs["headGroupSpec"].(map[string]any)["template"]}
	for _, g := range cs["workerGroupSpecs"].([]any) {
		pods = append(pods, g.(map[string]any)["template"])
	}
	require.Len(t, pods, 2, "segmentSize 2 with 2 replicas: one worker group")
	for _, p := range pods {
		ps := p.(map[string]any)["spec"].(map[string]any)
		require.Equal(t, "research-high", ps["priorityClassName"])
		for _, c := range ps["containers"].([]any) {
			env := c.(map[string]any)["env"].([]any)
			n := len(env)
			require.GreaterOrEqual(t, n, 2)
			// After the container's own, in name order.
			require.Equal(t, map[string]any{"name": "A_FIRST", "value": "1"}, env[n-2])
			require.Equal(t, map[string]any{"name": "NCCL_DEBUG", "value": "INFO"}, env[n-1])
		}
	}
}
