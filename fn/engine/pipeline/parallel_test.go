package pipeline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// parallelProfile: 2 workers of 8 GPUs, running the given driver.
func parallelProfile(driver string, computeDomain bool) string {
	p := strings.Replace(goodProfile, "python examples/run_grpo.py --config r.yaml cluster.num_nodes=2", "python "+driver+" --config r.yaml", 1)
	p = strings.Replace(p, `nvidia.com/gpu: "4"`, `nvidia.com/gpu: "8"`, 1)
	if !computeDomain {
		p = strings.Replace(p, "resourceClaims: [{name: compute-domain-channel}]", "resourceClaims: []", 1)
	}
	return p
}

func parallelRecipe(alg, extra string) string {
	return alg + `: {max_num_steps: 1}
cluster: {gpus_per_node: 8, num_nodes: 2}
policy:
  train_global_batch_size: 32
  train_micro_batch_size: 2
  dynamic_batching: {enabled: false}
  sequence_packing: {enabled: false}
  dtensor_cfg: {enabled: true, tensor_parallel_size: 2, context_parallel_size: 1}
  megatron_cfg: {enabled: false}
  optimizer: {kwargs: {foreach: false, fused: false}}
` + extra
}

const grpoGeneration = `  generation:
    backend: vllm
    colocated:
      enabled: false
      resources: {gpus_per_node: 8, num_nodes: 1}
    vllm_cfg: {tensor_parallel_size: 4, pipeline_parallel_size: 1, expert_parallel_size: 1}
`

func messages(ds diag.List, sev diag.Severity) string {
	var b strings.Builder
	for _, d := range ds {
		if d.Severity == sev {
			b.WriteString(d.String() + "\n")
		}
	}
	return b.String()
}

// The world each rule divides is the one NeMo-RL's setup() builds.
func TestParallelismWorldSizes(t *testing.T) {
	for _, tc := range []struct {
		name, driver, recipe string
		overrides            []string
		computeDomain        bool
		wantErr, wantWarn    string // "" = none
	}{
		{name: "sft fits", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", "")},
		// DP = 16 GPUs / TP 2 = 8. SFT: 36 does not split over 8 ranks.
		// DPO doubles both sizes: 72 does, 9 per rank, not a multiple of 4.
		{name: "dpo doubles the batch", driver: "examples/run_dpo.py", recipe: parallelRecipe("dpo", ""), overrides: []string{"policy.train_global_batch_size=36"},
			wantErr: "each of the 8 data-parallel ranks"},
		{name: "sft the same batch", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""), overrides: []string{"policy.train_global_batch_size=36"},
			wantErr: "expected a multiple of the data-parallel size 8"},
		{name: "dynamic batching sizes micro batches by tokens", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""),
			overrides: []string{"policy.train_global_batch_size=8", "policy.dynamic_batching.enabled=true"}},
		// GRPO, generation on 1 of 2 nodes: training has 8 GPUs (TP 8: one
		// data-parallel rank), vLLM 8.
		{name: "grpo non-colocated", driver: "examples/run_grpo.py", recipe: parallelRecipe("grpo", grpoGeneration),
			overrides: []string{"policy.dtensor_cfg.tensor_parallel_size=8", "policy.train_global_batch_size=7"},
			wantErr:   "each of the 1 data-parallel ranks gets 7 samples"},
		{name: "grpo vLLM TP over its GPUs", driver: "examples/run_grpo.py", recipe: parallelRecipe("grpo", grpoGeneration),
			overrides: []string{"policy.generation.vllm_cfg.tensor_parallel_size=16"},
			wantErr:   "vLLM generation runs on 8 GPUs, which TP × PP = 16 does not divide"},
		{name: "vLLM expert parallel", driver: "examples/run_grpo.py", recipe: parallelRecipe("grpo", grpoGeneration),
			overrides: []string{"policy.generation.vllm_cfg.expert_parallel_size=6"},
			wantErr:   "expected a multiple of tensor_parallel_size 4"},
		// Megatron, 16 GPUs: TP 2 × PP 1 × CP 1 fits, expert TP 2 × EP 3 does not.
		{name: "megatron expert parallel", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""),
			overrides: []string{"policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true",
				"+policy.megatron_cfg.tensor_model_parallel_size=2", "+policy.megatron_cfg.pipeline_model_parallel_size=1",
				"+policy.megatron_cfg.context_parallel_size=1", "+policy.megatron_cfg.expert_model_parallel_size=3"},
			wantErr: "which expert TP 2 × EP 3 × PP 1 = 6 does not divide"},
		{name: "TP across nodes warns", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""),
			overrides: []string{"policy.dtensor_cfg.tensor_parallel_size=16", "policy.train_global_batch_size=2", "policy.train_micro_batch_size=2"},
			wantWarn:  "tensor parallel groups span nodes"},
		{name: "not inside one NVLink domain", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""), computeDomain: true,
			overrides: []string{"policy.dtensor_cfg.tensor_parallel_size=16", "policy.train_global_batch_size=2", "policy.train_micro_batch_size=2"}},
		{name: "a bool is no count", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""), overrides: []string{"policy.train_micro_batch_size=true"},
			wantErr: "found true (a boolean, set by run override \"policy.train_micro_batch_size=true\"); expected a positive integer"},
		{name: "a shell variable is the pod's", driver: "examples/run_sft.py", recipe: parallelRecipe("sft", ""), overrides: []string{"cluster.num_nodes=${NODES}"}},
		{name: "the driver's own script is not judged", driver: "train.py", recipe: parallelRecipe("dpo", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := run(t, parallelProfile(tc.driver, tc.computeDomain), tc.recipe, tc.overrides, runparams.RayJob)
			errs, warns := messages(ds, diag.Error), messages(ds, diag.Warning)
			if tc.wantErr == "" {
				require.Empty(t, errs)
			} else {
				require.Contains(t, errs, tc.wantErr)
				require.Equal(t, 1, strings.Count(errs, "\n"), "one error, no cascade:\n%s", errs)
			}
			if tc.wantWarn == "" {
				require.NotContains(t, warns, "tensor parallel groups span nodes")
			} else {
				require.Contains(t, warns, tc.wantWarn)
			}
		})
	}
}
