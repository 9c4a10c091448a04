package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Each NeMo-RL start-up assertion restated in parallel.go, broken once,
// and its neighbours that hold.
func TestParallelism(t *testing.T) {
	const (
		one8  = "cluster: {num_nodes: 1, gpus_per_node: 8}\n"
		two4  = "cluster: {num_nodes: 2, gpus_per_node: 4}\n"
		dt1   = "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 1, context_parallel_size: 1}"
		meg1  = "policy: {megatron_cfg: {enabled: true, tensor_model_parallel_size: 1, pipeline_model_parallel_size: 1, context_parallel_size: 1"
		tpKey = "policy.dtensor_cfg.tensor_parallel_size"
		gbs   = "policy.train_global_batch_size"
	)
	for _, tc := range []struct {
		name, recipe string
		nvlink       bool
		want         []string
	}{
		{"TP does not divide the world", "sft: {}\n" + one8 + "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 3, context_parallel_size: 1}}", false,
			[]string{"warning r.yaml " + tpKey, "error r.yaml " + tpKey}},
		{"TP across nodes", "sft: {}\n" + two4 + "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 8, context_parallel_size: 1}}", false,
			[]string{"warning r.yaml " + tpKey}},
		{"TP across an NVLink domain", "sft: {}\n" + two4 + "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 8, context_parallel_size: 1}}", true, nil},
		{"global batch not sharded evenly", "sft: {}\n" + one8 + dt1 + ", train_global_batch_size: 12}", false, []string{"error r.yaml " + gbs}},
		{"micro batch does not divide a shard", "sft: {}\n" + one8 + dt1 + ", train_global_batch_size: 16, train_micro_batch_size: 3}", false, []string{"error r.yaml " + gbs}},
		{"dynamic batching sizes micro batches", "sft: {}\n" + one8 + dt1 + ", train_global_batch_size: 16, train_micro_batch_size: 3, dynamic_batching: {enabled: true}}", false, nil},
		{"DPO doubles the pairs", "dpo: {}\n" + one8 + dt1 + ", train_global_batch_size: 4, train_micro_batch_size: 1}", false, []string{"error r.yaml " + gbs}},
		{"validation batch not sharded evenly", "sft: {val_global_batch_size: 12, val_period: 10}\n" + one8 + dt1 + ", train_global_batch_size: 16}", false,
			[]string{"error r.yaml sft.val_global_batch_size"}},
		{"validation micro batch", "sft: {val_global_batch_size: 16, val_micro_batch_size: 3, val_period: 10}\n" + one8 + dt1 + ", train_global_batch_size: 16}", false,
			[]string{"error r.yaml sft.val_global_batch_size"}},
		{"never validates", "sft: {val_global_batch_size: 12, val_period: 0}\n" + one8 + dt1 + ", train_global_batch_size: 16}", false, nil},
		{"expert parallel does not divide", "sft: {}\n" + one8 + meg1 + ", expert_model_parallel_size: 3}}", false,
			[]string{"error r.yaml policy.megatron_cfg.expert_model_parallel_size"}},
		{"vLLM TP does not divide generation", "grpo: {}\n" + one8 + dt1 + ", generation: {backend: vllm, colocated: {enabled: true}, vllm_cfg: {tensor_parallel_size: 3}}}", false,
			[]string{"error r.yaml policy.generation.vllm_cfg.tensor_parallel_size"}},
		{"vLLM EP not a multiple of TP", "grpo: {}\n" + one8 + dt1 + ", generation: {backend: vllm, colocated: {enabled: true}, vllm_cfg: {tensor_parallel_size: 2, expert_parallel_size: 3}}}", false,
			[]string{"error r.yaml policy.generation.vllm_cfg.expert_parallel_size"}},
		{"one node split with generation", "grpo: {}\n" + one8 + "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 4, context_parallel_size: 1}, generation: {colocated: {enabled: false, resources: {gpus_per_node: 2}}}}", false,
			[]string{"error r.yaml " + tpKey}},
		{"reward model nodes: silent", "grpo: {}\nenv: {reward_model: {x: 1}}\n" + one8 + "policy: {dtensor_cfg: {enabled: true, tensor_parallel_size: 3, context_parallel_size: 1}, generation: {colocated: {enabled: true}}}", false,
			[]string{"warning r.yaml " + tpKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds diag.List
			r := recipeOf(t, tc.recipe)
			parallelism(&ds, newRecipeInts(&ds, r), r, tc.nvlink)
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
