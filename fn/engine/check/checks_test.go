package check

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// infraOf decodes a profile fragment into the typed profile the rules read.
func infraOf(t *testing.T, y string) *profile.Infra {
	t.Helper()
	in := &profile.Infra{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), in))
	return in
}

// recipeOf is an effective recipe of one file, with the overrides given as
// "origin:override" ("run:a.b=1", "entrypoint:~a.b").
func recipeOf(t *testing.T, y string, overrides ...string) *effective.Recipe {
	t.Helper()
	v, err := tree.Parse("r.yaml", []byte(y))
	require.NoError(t, err)
	r := &effective.Recipe{File: "r.yaml", Tree: v.(*tree.Map)}
	for _, o := range overrides {
		origin, raw, _ := strings.Cut(o, ":")
		p, err := hydra.Parse(raw)
		require.NoError(t, err)
		r.Overrides = append(r.Overrides, effective.AppliedOverride{Override: p, Origin: origin})
	}
	return r
}

// found is each finding as "severity file field", what a user acts on.
func found(ds diag.List) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s %s %s", d.Severity, d.File, d.Field))
	}
	return out
}

// cluster is a training cluster of one GPU worker group.
func cluster(replicas, gpus int, extra string) string {
	return fmt.Sprintf(`kuberay:
  training:
    name: t
    spec:
      headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
      workerGroupSpecs:
      - groupName: gpu
        replicas: %d
        template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: %d}}}]}}
%s`, replicas, gpus, extra)
}

func TestInputRules(t *testing.T) {
	rc := func(in *profile.Infra) profile.RoleCluster {
		return profile.RoleCluster{Role: "training", Cluster: in.Kuberay.Training}
	}
	piped := entrypoint.Parse("python examples/run_grpo.py | tee log")
	pipefail := entrypoint.Parse("set -o pipefail\npython examples/run_grpo.py | tee log")
	big := func([]string) (int64, error) { return RayUploadLimit + 1, nil }
	broken := func([]string) (int64, error) { return 0, errors.New("gone") }
	for _, tc := range []struct {
		name string
		rule func(t *testing.T, ds *diag.List)
		want []string
	}{
		{"piped driver without pipefail", func(_ *testing.T, ds *diag.List) { driverExit(ds, "p.yaml", &piped) },
			[]string{"warning p.yaml launch.entrypoint"}},
		{"piped driver with pipefail", func(_ *testing.T, ds *diag.List) { driverExit(ds, "p.yaml", &pipefail) }, nil},
		{"GPUs per worker differ", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(2, 4, "")), recipeOf(t, "cluster: {num_nodes: 2, gpus_per_node: 8}"))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[*].resources.limits[nvidia.com/gpu]"}},
		{"no GPU worker", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(2, 0, "")), recipeOf(t, "cluster: {num_nodes: 2, gpus_per_node: 8}"))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[*].template.spec.containers[*].resources.limits[nvidia.com/gpu]"}},
		{"too few nodes", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(2, 8, "")), recipeOf(t, "cluster: {num_nodes: 4, gpus_per_node: 8}"))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[*].replicas"}},
		{"idle nodes", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(4, 8, "")), recipeOf(t, "cluster: {num_nodes: 2, gpus_per_node: 8}"))
		}, []string{"warning p.yaml kuberay.training.spec.workerGroupSpecs[*].replicas"}},
		{"generation takes every node", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(2, 8, "")), recipeOf(t,
				"cluster: {num_nodes: 2, gpus_per_node: 8}\npolicy: {generation: {colocated: {enabled: false, resources: {num_nodes: 2}}}}"))
		}, []string{"error r.yaml policy.generation.colocated.resources.num_nodes"}},
		{"recipe fits", func(t *testing.T, ds *diag.List) {
			recipeVsCluster(ds, "p.yaml", infraOf(t, cluster(2, 8, "")), recipeOf(t, "cluster: {num_nodes: 2, gpus_per_node: 8}"))
		}, nil},
		{"two backends", func(t *testing.T, ds *diag.List) {
			megatron(ds, "p.yaml", recipeOf(t, "policy: {megatron_cfg: {enabled: true}, dtensor_cfg: {enabled: true}}"))
		}, []string{"error r.yaml policy.megatron_cfg.enabled"}},
		{"Megatron optimizer kwarg deleted", func(t *testing.T, ds *diag.List) {
			megatron(ds, "p.yaml", recipeOf(t, "policy: {megatron_cfg: {enabled: true}}", "entrypoint:~policy.optimizer.kwargs.foreach", "run:~policy.optimizer.kwargs.fused"))
		}, []string{"error p.yaml policy.optimizer.kwargs.foreach", "error r.yaml policy.optimizer.kwargs.fused"}},
		{"DTensor kwarg deleted", func(t *testing.T, ds *diag.List) {
			megatron(ds, "p.yaml", recipeOf(t, "policy: {dtensor_cfg: {enabled: true}}", "run:~policy.optimizer.kwargs.fused"))
		}, nil},
		{"segment size over the node bound", func(t *testing.T, ds *diag.List) {
			bounds(ds, "p.yaml", rc(infraOf(t, cluster(2, 8, "    segmentSize: 1000000000"))))
		}, []string{"error p.yaml kuberay.training.segmentSize"}},
		{"replicas over the node bound", func(t *testing.T, ds *diag.List) {
			bounds(ds, "p.yaml", rc(infraOf(t, cluster(2147483647, 8, ""))))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[*].replicas"}},
		{"replicas not a multiple of segmentSize", func(t *testing.T, ds *diag.List) {
			segments(ds, "p.yaml", rc(infraOf(t, cluster(6, 8, "    segmentSize: 4"))))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[0].replicas"}},
		{"replicas a multiple of segmentSize", func(t *testing.T, ds *diag.List) {
			segments(ds, "p.yaml", rc(infraOf(t, cluster(8, 8, "    segmentSize: 4"))))
		}, nil},
		{"webhook-owned fields", func(t *testing.T, ds *diag.List) {
			in := infraOf(t, cluster(1, 8, ""))
			c := &in.Kuberay.Training.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
			require.NoError(t, yaml.Unmarshal([]byte("{resources: {requests: {ephemeral-storage: 1Gi}}, readinessProbe: {exec: {command: [x]}}}"), c))
			webhookFields(ds, "p.yaml", rc(in))
		}, []string{"error p.yaml kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests.ephemeral-storage",
			"error p.yaml kuberay.training.spec.workerGroupSpecs[0].template.spec.containers[0].readinessProbe"}},
		{"literal credentials", func(t *testing.T, ds *diag.List) {
			in := infraOf(t, cluster(1, 8, "    daemon: {env: {WANDB_API_KEY: k}}\nlaunch: {env: {HF_TOKEN: x, HF_HOME: /h}}\nenv: {AWS_SECRET_ACCESS_KEY: s}"))
			c := &in.Kuberay.Training.Spec.HeadGroupSpec.Template.Spec.Containers[0]
			require.NoError(t, yaml.Unmarshal([]byte("{env: [{name: API_TOKEN, value: abcdef}, {name: PATH, value: /bin}]}"), c))
			secretEnv(ds, "p.yaml", in)
		}, []string{"error p.yaml kuberay.training.spec.headGroupSpec.template.spec.containers[0].env[0] (API_TOKEN)",
			"error p.yaml kuberay.training.daemon.env.WANDB_API_KEY", "error p.yaml launch.env.HF_TOKEN", "error p.yaml env.AWS_SECRET_ACCESS_KEY"}},
		{"upload over Ray's cap", func(t *testing.T, ds *diag.List) {
			upload(ds, "p.yaml", infraOf(t, cluster(1, 8, "launch: {codeSource: upload}")), runparams.Params{}, big)
		}, []string{"warning p.yaml launch.codeSource", "error p.yaml launch.rayUploadPaths"}},
		{"upload not measurable", func(t *testing.T, ds *diag.List) {
			upload(ds, "p.yaml", infraOf(t, cluster(1, 8, "launch: {codeSource: upload}")), runparams.Params{}, broken)
		}, []string{"warning p.yaml launch.codeSource", "error p.yaml launch.rayUploadPaths"}},
		{"upload in dev mode", func(t *testing.T, ds *diag.List) {
			upload(ds, "p.yaml", infraOf(t, cluster(1, 8, "launch: {codeSource: upload}")), runparams.Params{Run: runparams.Run{Mode: runparams.Dev}}, big)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds diag.List
			tc.rule(t, &ds)
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}

func TestAsInt(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{{int64(3), 3, true}, {4.0, 4, true}, {4.5, 0, false}, {" 7 ", 7, true}, {"x", 0, false}, {true, 0, false}} {
		n, ok := AsInt(tc.in)
		require.Equal(t, []any{tc.want, tc.ok}, []any{n, ok}, "%#v", tc.in)
	}
}

// docOf is an emitted document read from YAML.
func docOf(t *testing.T, y string) rendered.Doc {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(y), &m))
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	kind, _ := m["kind"].(string)
	return rendered.Doc{Kind: kind, Name: name, Data: m}
}

// objOf decodes YAML into a typed object.
func objOf[T any](t *testing.T, y string) *T {
	t.Helper()
	var o T
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), &o))
	return &o
}
