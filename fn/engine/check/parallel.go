package check

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// The parallelism and batch rules below restate assertions NeMo-RL makes
// once the Ray cluster is up (docs/nrl-k8s.md §5.2 cites file and line):
// caught here, they cost a render instead of a cluster start. Each rule
// runs only where the world size it needs is known from the recipe alone;
// where NeMo-RL carves the cluster in ways that depend on more (reward
// model environments, on-policy distillation teachers, PPO's value model,
// distillation's teacher) it stays silent rather than guess.

// backend is the policy's training backend and its parallel sizes.
type backend struct {
	name                  string // "megatron" | "dtensor"
	tp, pp, cp            int64
	tpKey, ppKey, cpKey   string // recipe keys, for messages
	dynamicBatch, packing bool
}

// policyBackend reads the enabled backend's sizes (lm_policy.py: Megatron's
// tensor/pipeline/context_model_parallel sizes; DTensor's tensor and
// context parallel sizes, pipeline 1). Both or neither enabled: megatron()
// or NeMo-RL itself reports it; no sizes.
func policyBackend(v *recipeInts, r *effective.Recipe) (backend, bool) {
	meg, _, _ := r.Value("policy.megatron_cfg.enabled")
	dt, _, _ := r.Value("policy.dtensor_cfg.enabled")
	var b backend
	switch {
	case isTrue(meg) && !isTrue(dt):
		b = backend{name: "megatron", tpKey: "policy.megatron_cfg.tensor_model_parallel_size",
			ppKey: "policy.megatron_cfg.pipeline_model_parallel_size", cpKey: "policy.megatron_cfg.context_parallel_size"}
	case isTrue(dt) && !isTrue(meg):
		b = backend{name: "dtensor", tpKey: "policy.dtensor_cfg.tensor_parallel_size", cpKey: "policy.dtensor_cfg.context_parallel_size", pp: 1}
	default:
		return b, false
	}
	ok := true
	read := func(key string, dst *int64) {
		if key == "" {
			return
		}
		n, got := v.get(key)
		*dst = n
		ok = ok && got
	}
	read(b.tpKey, &b.tp)
	read(b.ppKey, &b.pp)
	read(b.cpKey, &b.cp)
	dyn, _, _ := r.Value("policy.dynamic_batching.enabled")
	pack, _, _ := r.Value("policy.sequence_packing.enabled")
	b.dynamicBatch, b.packing = isTrue(dyn), isTrue(pack)
	return b, ok
}

// worlds are the GPU counts of the policy's training workers and of the
// vLLM generation workers (0: none or unknown).
type worlds struct {
	train, generation int64
	how               string // how train was derived, for messages
}

// worldSizes follows each algorithm's setup(): SFT, DPO and RM train on
// `[gpus_per_node] * num_nodes` (sft.py, dpo.py, rm.py); GRPO shares that
// cluster with colocated generation, or splits nodes (or, on one node,
// GPUs) between training and non-colocated generation (grpo.py setup).
func worldSizes(v *recipeInts, r *effective.Recipe, alg string, nodes, gpn int64) (worlds, bool) {
	all := mulCap(nodes, gpn)
	switch alg {
	case "sft", "dpo", "rm":
		return worlds{train: all, how: "cluster.num_nodes × cluster.gpus_per_node"}, true
	case "grpo":
	default:
		return worlds{}, false
	}
	if present(r, "env.reward_model") || present(r, "on_policy_distillation") {
		return worlds{}, false // nodes reserved for other roles
	}
	col, ok, _ := r.Value("policy.generation.colocated.enabled")
	if !ok {
		return worlds{}, false
	}
	if isTrue(col) {
		return worlds{train: all, generation: all, how: "cluster.num_nodes × cluster.gpus_per_node (generation colocated)"}, true
	}
	if nodes == 1 {
		ig, ok := v.get("policy.generation.colocated.resources.gpus_per_node")
		if !ok || ig >= gpn {
			return worlds{}, false // NeMo-RL's own assertion (grpo.py) says it
		}
		return worlds{train: gpn - ig, generation: ig, how: "cluster.gpus_per_node − policy.generation.colocated.resources.gpus_per_node (one node, generation not colocated)"}, true
	}
	in, ok := v.get("policy.generation.colocated.resources.num_nodes")
	if !ok || in >= nodes {
		return worlds{}, false // recipeVsCluster reports generation taking every node
	}
	return worlds{train: mulCap(nodes-in, gpn), generation: mulCap(in, gpn),
		how: "(cluster.num_nodes − policy.generation.colocated.resources.num_nodes) × cluster.gpus_per_node (generation not colocated)"}, true
}

// parallelism checks the policy's and vLLM's parallel sizes and the batch
// sizes against the GPUs the recipe gives them.
func parallelism(ds *diag.List, v *recipeInts, r *effective.Recipe, nvlinkAcrossNodes bool) {
	algs := RecipeAlgorithms(r.Tree)
	if len(algs) != 1 {
		return
	}
	alg := algs[0]
	nodes, okN := v.get("cluster.num_nodes")
	gpn, okG := v.get("cluster.gpus_per_node")
	b, okB := policyBackend(v, r)
	if !okN || !okG {
		return
	}
	w, okW := worldSizes(v, r, alg, nodes, gpn)
	if okB {
		if !nvlinkAcrossNodes {
			tpPerNode(ds, r, b.tpKey, b.tp, gpn)
		}
		if okW {
			trainWorld(ds, v, r, alg, b, w)
		}
	}
	if okW && w.generation > 0 {
		vllm(ds, v, r, w.generation)
	}
}

// tpPerNode: a tensor parallel group all-reduces every layer; NeMo-RL
// lays ranks out node by node (lm_policy.py's NamedSharding reshape), so a
// size above or not dividing the GPUs of a node puts a group across nodes.
// NeMo-RL does not refuse that, hence a warning, and none where the workers
// share an NVLink domain across nodes (nvlinkAcrossNodes).
func tpPerNode(ds *diag.List, r *effective.Recipe, key string, tp, gpn int64) {
	if tp <= gpn && gpn%tp == 0 {
		return
	}
	ds.Warnf(fileOf(r, key), key, "found %d (set by %s) with cluster.gpus_per_node=%d (set by %s): tensor parallel groups span nodes, so every layer's all-reduce crosses the network; expected a size that divides %d",
		tp, r.Origin(key), gpn, r.Origin("cluster.gpus_per_node"), gpn)
}

// trainWorld: lm_policy.py refuses a world size below or not divisible by
// PP × CP × TP; the data-parallel shards then split the global batch
// (batched_data_dict.py shard_by_batch_size), and each shard is cut into
// micro batches (make_microbatch_iterator) unless dynamic batching or
// sequence packing sizes them by tokens. DPO and RM train on chosen and
// rejected pairs: both sizes doubled (dpo.py, rm.py).
func trainWorld(ds *diag.List, v *recipeInts, r *effective.Recipe, alg string, b backend, w worlds) {
	mp := mulCap(mulCap(b.tp, b.pp), b.cp)
	size := func(name, key string, n int64) string {
		return fmt.Sprintf("%s %d (%s, set by %s)", name, n, key, r.Origin(key))
	}
	sizes := size("TP", b.tpKey, b.tp)
	if b.ppKey != "" {
		sizes += " × " + size("PP", b.ppKey, b.pp)
	}
	sizes += " × " + size("CP", b.cpKey, b.cp)
	if w.train%mp != 0 || w.train < mp {
		ds.Errorf(fileOf(r, b.tpKey), b.tpKey, "the policy trains on %d GPUs (%s), which the model-parallel size %s = %d does not divide; expected %d to be a multiple of %d, or NeMo-RL stops at start-up (lm_policy.py: world size must be divisible by PP * CP * TP)",
			w.train, w.how, sizes, mp, w.train, mp)
		return
	}
	if b.name == "megatron" {
		expertWorld(ds, v, r, b, w)
	}
	dp := w.train / mp
	valWorld(ds, v, r, alg, b, dp)
	gbs, okG := v.get("policy.train_global_batch_size")
	mbs, okM := v.get("policy.train_micro_batch_size")
	if !okG {
		return
	}
	k := int64(1)
	if alg == "dpo" || alg == "rm" {
		k = 2
	}
	const gk = "policy.train_global_batch_size"
	if mulCap(gbs, k)%dp != 0 {
		ds.Errorf(fileOf(r, gk), gk, "found %d (set by %s); expected a multiple of the data-parallel size %d (%d GPUs / model-parallel %d), or NeMo-RL fails sharding the first training batch (batched_data_dict.py: batch size is not a multiple of shards)",
			gbs, r.Origin(gk), dp, w.train, mp)
		return
	}
	if !okM || b.dynamicBatch || b.packing {
		return
	}
	if (mulCap(gbs, k)/dp)%mulCap(mbs, k) != 0 {
		ds.Errorf(fileOf(r, gk), gk, "found %d (set by %s): each of the %d data-parallel ranks gets %d samples, not a multiple of policy.train_micro_batch_size=%d (set by %s); expected the global batch a multiple of data-parallel size × micro batch = %d, or NeMo-RL fails cutting micro batches (batched_data_dict.py make_microbatch_iterator)",
			gbs, r.Origin(gk), dp, gbs/dp, mbs, r.Origin("policy.train_micro_batch_size"), mulCap(dp, mbs))
	}
}

// valWorld: SFT, DPO and RM validate through policy.train too (sft.py,
// dpo.py, rm.py validate(): policy.train(val_batch, eval_mode=True,
// gbs=<alg>.val_global_batch_size, mbs=<alg>.val_micro_batch_size), DPO
// and RM with both doubled for the chosen/rejected pairs), so the
// validation batch is sharded over the same data-parallel ranks and cut
// into the same micro batches as the training batch: the same two
// assertions, at the first validation (val_at_start, or after val_period
// steps), with the model already loaded.
func valWorld(ds *diag.List, v *recipeInts, r *effective.Recipe, alg string, b backend, dp int64) {
	if alg != "sft" && alg != "dpo" && alg != "rm" {
		return
	}
	gk, mk := alg+".val_global_batch_size", alg+".val_micro_batch_size"
	gbs, okG := v.get(gk)
	if !okG || gbs <= 0 {
		return
	}
	// val_period may be 0 or -1 (never): read as it is, not as a count.
	pv, _, _ := r.Value(alg + ".val_period")
	period, okP := pv.(int64)
	atStart, _, _ := r.Value(alg + ".val_at_start")
	if okP && period <= 0 && !isTrue(atStart) {
		return // never validates
	}
	k := int64(1)
	if alg != "sft" {
		k = 2
	}
	when := "at its first validation"
	if isTrue(atStart) {
		when = "at the validation before the first step (" + alg + ".val_at_start, after the model has loaded)"
	}
	if mulCap(gbs, k)%dp != 0 {
		ds.Errorf(fileOf(r, gk), gk, "found %d (set by %s)%s; expected a multiple of the data-parallel size %d, or NeMo-RL fails sharding the validation batch over the ranks %s (%s.py validate → policy.train; batched_data_dict.py shard_by_batch_size: batch size is not a multiple of shards)",
			gbs, r.Origin(gk), doubled(k), dp, when, alg)
		return
	}
	mbs, okM := v.get(mk)
	if !okM || mbs <= 0 || b.dynamicBatch || b.packing {
		return
	}
	if (mulCap(gbs, k)/dp)%mulCap(mbs, k) != 0 {
		ds.Errorf(fileOf(r, gk), gk, "found %d (set by %s): each of the %d data-parallel ranks gets %d validation samples, not a multiple of %s=%d (set by %s); expected a multiple of data-parallel size × validation micro batch = %d, or NeMo-RL fails cutting micro batches %s (batched_data_dict.py make_microbatch_iterator)",
			gbs, r.Origin(gk), dp, mulCap(gbs, k)/dp/k, mk, mbs, r.Origin(mk), mulCap(dp, mbs), when)
	}
}

func doubled(k int64) string {
	if k == 2 {
		return ", doubled for the chosen and rejected pairs"
	}
	return ""
}

// expertWorld: Megatron-core's initialize_model_parallel (megatron/core/
// parallel_state.py, which NeMo-RL's Megatron worker reaches with the sizes
// megatron/setup.py:890-894 copies from the recipe) raises unless the world
// is a multiple of expert TP × EP × PP, expert TP defaulting to TP.
func expertWorld(ds *diag.List, v *recipeInts, r *effective.Recipe, b backend, w worlds) {
	const ek, etk = "policy.megatron_cfg.expert_model_parallel_size", "policy.megatron_cfg.expert_tensor_parallel_size"
	ep, ok := v.get(ek)
	if !ok {
		return
	}
	etp, ok := v.get(etk)
	if !ok {
		etp = b.tp
	}
	if e := mulCap(mulCap(etp, ep), b.pp); w.train%e != 0 {
		ds.Errorf(fileOf(r, ek), ek, "found %d (set by %s): the policy trains on %d GPUs (%s), which expert TP %d × EP %d × PP %d = %d does not divide; expected %d to be a multiple of %d, or Megatron stops at start-up (megatron/core/parallel_state.py: world_size is not divisible by expert_tensor_model_pipeline_parallel size)",
			ep, r.Origin(ek), w.train, w.how, etp, ep, b.pp, e, w.train, e)
	}
}

// vllm: vllm_generation.py asserts that TP × PP divides the generation
// workers' GPUs, and that an expert parallel size above 1 is a multiple
// of TP.
func vllm(ds *diag.List, v *recipeInts, r *effective.Recipe, world int64) {
	be, _, _ := r.Value("policy.generation.backend")
	if be != "vllm" {
		return
	}
	const tk, pk, ek = "policy.generation.vllm_cfg.tensor_parallel_size", "policy.generation.vllm_cfg.pipeline_parallel_size", "policy.generation.vllm_cfg.expert_parallel_size"
	tp, okT := v.get(tk)
	pp, okP := v.get(pk)
	if !okT {
		return
	}
	if !okP {
		pp = 1
	}
	if world%mulCap(tp, pp) != 0 {
		ds.Errorf(fileOf(r, tk), tk, "found %d (set by %s) with pipeline_parallel_size %d: vLLM generation runs on %d GPUs, which TP × PP = %d does not divide; expected a divisor of %d, or NeMo-RL stops at start-up (vllm_generation.py: world size must be a multiple of model parallel size)",
			tp, r.Origin(tk), pp, world, mulCap(tp, pp), world)
	}
	if ep, ok := v.get(ek); ok && ep > 1 && ep%tp != 0 {
		ds.Errorf(fileOf(r, ek), ek, "found %d (set by %s); expected a multiple of tensor_parallel_size %d (vLLM's EP = DP × TP), or NeMo-RL stops at start-up (vllm_generation.py)",
			ep, r.Origin(ek), tp)
	}
}

// present: the recipe has a non-null value at key.
func present(r *effective.Recipe, key string) bool {
	v, ok, _ := r.Value(key)
	return ok && v != nil
}

// fileOf is the file whose key a finding is about: the chain file that
// set it, else the recipe (an override set it; the message says which).
func fileOf(r *effective.Recipe, key string) string {
	if f := r.OriginFile(key); f != "" {
		return f
	}
	return r.File
}

// mulCap multiplies positive counts, saturating instead of overflowing.
func mulCap(a, b int64) int64 {
	const maxCount = int64(1) << 62
	if a != 0 && b > maxCount/a {
		return maxCount
	}
	return a * b
}
