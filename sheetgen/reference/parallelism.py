"""The Parallelism sheet: memory per GPU under a multi-GPU layout, the smallest GPU
count that fits, communication per step and the pipeline bubble.

Layout (Megatron-LM): n_gpus = dp x tp x pp x cp; expert parallelism (ep) splits
the routed experts and is carved out of the dp x cp replicas.  Ranks are ordered
tp, cp, ep, dp, pp (Megatron-LM's default order), so a group of size g whose
ranks are k apart stays inside a node when g x k <= GPUs per node.

Static memory (first pipeline stage, the usual peak: it holds the input
embedding; the last stage holds the output layer instead):
  parameters per GPU = (non-expert layer parameters / pp + embeddings) / tp
                     + routed-expert parameters / (pp x ep x tp)
  (Megatron-LM's theoretical memory divides whole layers by tp and pp; norms are
  counted as split too, which they are not, but they are < 0.01% of a layer.)
  ZeRO (Rajbhandari et al. 2020) over the dp x cp replicas (dp x cp / ep for expert
  parameters): stage 1 shards FP32 master weights and optimizer states, stage 2
  also gradients, stage 3 also the weights.

Activations per GPU (Korthikanti et al. 2022, section 4): tensor parallelism
splits the attention and MLP tensors (Q, K, V, O input, MLP tensors, scores) by
tp; the norm inputs, the QKV and MLP inputs (and MLA latents) and the dropout
masks stay whole unless sequence parallelism splits them by tp too.  For GPT-3
with dropout and naive attention this is s b h (10 + 24/t + 5as/(ht)) without
and s b h (34/t + 5as/(ht)) with sequence parallelism.  Context parallelism
divides the sequence.  A 1F1B first stage keeps min(pp, m) micro-batches of its
L/pp layers in flight; interleaving (v > 1) multiplies that by 1 + (pp-1)/(pp v)
(Korthikanti et al. 2022, section 4.2.3, after Narayanan et al. 2021), and never
past the step's m micro-batches: Megatron-Core's interleaved warm-up on the first
stage is 2(pp-1) + (v-1)pp + 1 chunk passes (= pp (1 + (pp-1)/(pp v)) whole-stage
micro-batches), capped at the m v chunk passes of the step, and with m = pp every
forward pass runs before the first backward (Megatron-LM megatron/core/
pipeline_parallel/schedules.py, get_pp_rank_microbatches).

Communication per optimizer step per GPU: ``communication.py``.

Framework memory (issue 12):
  ZeRO-3 / FSDP working buffer = 2 x act bytes x the largest unit gathered whole
  (the embedding, the output layer or one transformer layer, / tp): the unit in
  use plus the next one prefetched.  DeepSpeed's estimator counts 4 bytes x its
  largest layer (BF16: 2 x 2); for Llama models that is the embedding.
  Offload: offload_optimizer moves gradients, FP32 master weights and optimizer
  states to host memory (ZeRO-Offload), offload_params the weights
  (ZeRO-Infinity).  Host memory per node = offloaded bytes per GPU x GPUs in the
  node x host_buffer_factor.  PCIe traffic per step per GPU: gradients down and
  updated weights up once per step for the optimizer's share (weights up only if
  they stay on the GPU), and with offloaded weights each micro-batch's forward
  and backward fetch them (2 m x weight bytes); its time at the host link is
  added to the communication time.
  The peak per GPU as PyTorch's counters and nvidia-smi see it, the verdict, the
  fewest GPUs and the largest micro-batch: ``parallelism_fit.py``.

Issue 40: interleaving with N micro-batches per chunk group (``pp_microbatch_group``)
counts the first stage's warm-up pass by pass (``_warm_up``); offloaded activations
(``act_offload_share``) leave the GPU; the average layer the clock reads is the one
written, whatever the recomputed modules keep.

Days and GPU cost at the estimated step time (perfect overlap): steps x step /
goodput, and GPUs x those days x 24 x the GPU-hour price; the Schedule's days
use the MFU input instead, which does not see the layout.
"""

from __future__ import annotations

from typing import Any

from sheetgen.reference.communication import communication
from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import microbatches
from sheetgen.reference.memory import memory
from sheetgen.reference.parallelism_fit import fewest_gpus, max_micro_batch, peak, zero3_buffer
from sheetgen.reference.params import params
from sheetgen.reference.throughput import step_model
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import HOURS_PER_DAY, SECONDS_PER_DAY


def parallelism_given(
    s: Scenario, p: dict[str, float], mem: dict[str, float], f: dict, sch: dict
) -> dict[str, float]:
    """``parallelism(s)`` from the scenario's Params, Memory, FLOPs and Schedule keys
    (none depends on tp, pp, cp, ep, dp or ZeRO: a layout search computes them once)."""
    lay = layout(s, p, mem, f)
    return {**lay, **with_schedule(s, lay, sch)}


def predicted(s: Scenario) -> dict[str, float]:
    """The layout's keys without the Schedule: what the clock (``mfu_predicted``) needs."""
    return layout(s, params(s.model), memory(s), flops(s))


def layout(s: Scenario, p: dict[str, float], mem: dict[str, float], f: dict) -> dict[str, float]:
    """Memory per GPU, fewest GPUs, communication and the step-time model of this layout,
    in named steps; each reads the keys the steps before it returned."""
    k: dict[str, Any] = {}
    k.update(_geometry(s, p))
    k.update(_static_memory(s, mem, k))
    k.update(_gather_unit(s, p, mem))
    k.update(_activations(s, p, mem, k))
    k.update(peak(s, mem, k))
    k.update(fewest_gpus(s, mem, k))
    k.update(communication(s, p, mem, k))
    k["mem_act_layer_avg_gpu"] = k.pop("mem_act_layer_avg_gpu")  # the keys' order of old
    k.update(step_model(s, f, k))
    k.update(max_micro_batch(s, k))
    return {key: value for key, value in k.items() if not key.startswith("_")}


def layer_places(n_layers: int, split_embedding_loss: int, pp: int) -> int:
    """The places a pipeline split divides: the layers, and 2 more when the embedding and
    the loss each take a layer's place (``pp_split_embedding_loss``) on more than one
    stage (Megatron-LM --account-for-embedding-in-pipeline-split; The Llama 3 Herd of
    Models, section 3.3.2)."""
    return n_layers + (2 if split_embedding_loss and pp > 1 else 0)


def _geometry(s: Scenario, p: dict[str, float]) -> dict[str, Any]:
    """The layout's groups and the parameters each GPU holds (before ZeRO)."""
    m, run = s.model, s.run
    dp, tp, pp, cp, ep = run.dp, run.tp, run.pp, run.cp, run.ep
    v, mb = run.pp_virtual_stages, microbatches(run)
    zero_group = dp * cp
    zero_group_expert = dp * cp / ep
    routed = p["n_moe_layers"] * m.n_experts * p["params_expert"]
    nonexpert = p["params_layers"] - routed
    outside = p["params_embedding"] + p["params_pos_embedding"]
    if pp == 1:
        outside += p["params_output"] + p["params_final_norm"]
    # The first stage's transformer layers: n_layers / pp, or with the embedding and the
    # loss each in a layer's place, (n_layers + 2) / pp - 1 (and its first chunk of v
    # holds (n_layers + 2) / (pp v) - 1).
    places = layer_places(m.n_layers, run.pp_split_embedding_loss, pp)
    split = (places - m.n_layers) // 2  # 1: the embedding and the loss take places
    first_stage = places / pp - split
    first_chunk = places / (pp * v) - split
    # Interleaved (v > 1): N micro-batches pass through a chunk before the next (0 = pp);
    # the first stage's warm-up is 2 (pp - 1) + (v - 1) N + 1 chunk passes.
    group = run.pp_microbatch_group or pp
    per_gpu_dense = (nonexpert * first_stage / m.n_layers + outside) / tp
    per_gpu_expert = routed * first_stage / (m.n_layers * ep * tp)
    return {
        "n_gpus_layout": dp * tp * pp * cp,
        "sp_divisor": tp if run.sequence_parallel == 1 else 1,
        "zero_group": zero_group,
        "zero_group_expert": zero_group_expert,
        "_microbatches": mb,
        "layers_per_stage": m.n_layers / pp,
        "pp_split_active": split,
        "layers_first_stage": first_stage,
        "layers_first_chunk": first_chunk,
        "pp_group_used": group,
        "micro_batches_in_flight": min(group if v > 1 else pp, mb),
        # With the embedding in a layer's place the second stage holds a whole stage of
        # layers and, in Megatron-LM's schedule, one micro-batch fewer (v = 1: min(pp -
        # 1, m)) or 2 (pp - 2) + (v - 1) N + 1 chunk passes (v > 1: in stages' worth
        # N + (2 pp - 3 - N) / v, at most m): it can hold more than the first.
        "micro_batches_in_flight_stage2": (
            0
            if not split
            else min(group + (2 * pp - 3 - group) / v, mb)
            if v > 1
            else min(pp - 1, mb)
        ),
        **_warm_up(pp, v, group, first_chunk, first_stage),
        "params_routed_experts": routed,
        "params_layers_nonexpert": nonexpert,
        "params_stage_outside": outside,
        "params_per_gpu_dense": per_gpu_dense,
        "params_per_gpu_expert": per_gpu_expert,
        "params_per_gpu": per_gpu_dense + per_gpu_expert,
        "params_per_gpu_sharded": per_gpu_dense / zero_group + per_gpu_expert / zero_group_expert,
    }


def _warm_up(pp: int, v: int, group: int, first_chunk: float, first_stage: float) -> dict:
    """The first stage's warm-up under interleaving (v > 1): P = 2 (pp - 1) + (v - 1) N
    + 1 chunk passes before its first backward, N micro-batches through one chunk, then
    the next, so the first chunk gets floor(P / (N v)) N + min(P mod N v, N) of them and
    the other v - 1 chunks share the rest; in whole stages of layers,
    (first-chunk passes x its layers + the rest x the other chunks' layers) / stage 1's
    layers, and per micro-batch in flight (N) the interleaving factor.  N = pp with even
    chunks: 1 + (pp - 1) / (pp v) (Korthikanti et al. 2022, section 4.2.3)."""
    if v == 1:
        return {"pp_warmup_passes": pp, "pp_warmup_first_chunk_passes": pp, "interleave_factor": 1}
    passes = 2 * (pp - 1) + (v - 1) * group + 1
    cycles = passes // (group * v)
    first = cycles * group + min(passes - cycles * group * v, group)
    other_chunk = (first_stage - first_chunk) / (v - 1)
    stages = (first * first_chunk + (passes - first) * other_chunk) / first_stage
    return {
        "pp_warmup_passes": passes,
        "pp_warmup_first_chunk_passes": first,
        "interleave_factor": stages / group,
    }


def _static_memory(s: Scenario, mem: dict[str, float], k: dict[str, Any]) -> dict[str, Any]:
    """Static memory per GPU: what each state's sharding leaves, less what is offloaded."""
    run, zero = s.run, s.run.zero_stage
    per_gpu, sharded = k["params_per_gpu"], k["params_per_gpu_sharded"]
    oo, op = run.offload_optimizer, run.offload_params
    p_w = sharded if zero >= 3 else per_gpu
    p_g = sharded if zero >= 2 else per_gpu
    p_o = sharded if zero >= 1 else per_gpu
    w_all = mem["weight_bytes"] * p_w
    g_all = (mem["grad_bytes"] + mem["grad_accum_bytes"]) * p_g
    master_all = mem["master_bytes"] * p_o
    opt_all = mem["optimizer_bytes"] * p_o
    w = w_all * (1 - op)
    g = g_all * (1 - oo)
    master = master_all * (1 - oo)
    opt = opt_all * (1 - oo)
    host_states = w_all * op + (g_all + master_all + opt_all) * oo
    gpus_in_node = min(run.n_gpus, run.gpus_per_node)
    return {
        "_params_weights_held": p_w,
        "_params_optimizer_held": p_o,
        "mem_weights_per_gpu": w,
        "mem_grads_per_gpu": g,
        "mem_master_per_gpu": master,
        "mem_optimizer_per_gpu": opt,
        "mem_static_per_gpu": w + g + master + opt,
        "mem_host_states_per_gpu": host_states,
        "gpus_in_node": gpus_in_node,
        "mem_cpu_per_node": host_states * gpus_in_node * run.host_buffer_factor,
    }


def _gather_unit(s: Scenario, p: dict[str, float], mem: dict[str, float]) -> dict[str, Any]:
    """ZeRO-3 / FSDP working buffer: the largest unit gathered whole, plus one prefetched."""
    m, run = s.model, s.run
    layer_dense = p["params_attn_layer"] + p["params_norm_layer"] + p["params_mlp_layer"]
    layer_moe = (
        p["params_attn_layer"]
        + p["params_norm_layer"]
        + p["params_moe_layer"]
        - m.n_experts * p["params_expert"] * (1 - 1 / run.ep)
        if m.is_moe
        else 0
    )
    unit = max(p["params_embedding"], p["params_output"], layer_dense, layer_moe) / run.tp
    return {
        "params_gather_unit_gpu": unit,
        "mem_zero3_buffer_per_gpu": zero3_buffer(run.zero_stage, mem["act_bytes"], unit),
    }


def _activations(
    s: Scenario, p: dict[str, float], mem: dict[str, float], k: dict[str, Any]
) -> dict[str, Any]:
    """Activations per GPU (Korthikanti et al. 2022, section 4) under tp, sp, cp, pp."""
    m, run = s.model, s.run
    tp, pp, cp, b, seq = run.tp, run.pp, run.cp, run.micro_batch, run.seq_len
    act, sp_div = mem["act_bytes"], k["sp_divisor"]
    unsplit = 2 * m.hidden_size + mem["act_norm_outputs_token"]
    unsplit += m.q_lora_rank + m.kv_lora_rank if m.is_mla else 0
    masks = mem["mem_act_masks_layer"]
    extra = seq * b * (mem["act_extra_norm_token"] / sp_div + mem["act_extra_attn_token"] / tp)
    extra += seq * b * mem["act_fp8_whole_token"] / sp_div

    def layer(values: float, fp8_split: float) -> float:
        kept = act * seq * b * ((values - unsplit) / tp + unsplit / sp_div)
        return (kept + seq * b * fp8_split / tp + extra + masks / sp_div) / cp

    dense_layer = layer(mem["act_values_dense_layer"], mem["act_fp8_dense_token"])
    moe_layer = layer(mem["act_values_moe_layer"], mem["act_fp8_moe_token"]) if m.is_moe else 0
    scores_layer = mem["mem_act_scores_layer"] / (tp * cp)
    input_layer = mem["mem_act_input_layer"] / (sp_div * cp)
    naive = mem["attn_is_naive"]
    # The largest layer the model has (an all-MoE model has no dense-MLP layer to rebuild).
    has_dense = p["n_dense_mlp_layers"] > 0
    layer_max = max(dense_layer if has_dense else 0, moe_layer) + naive * scores_layer
    all_layers = p["n_dense_mlp_layers"] * dense_layer + p["n_moe_layers"] * moe_layer

    # The average layer as written, kept or not (what the step model's elementwise work
    # reads and writes): the framework choices of issue 40 change what is kept only.
    def written(split_token: float) -> float:
        whole = (mem["act_written_whole_token"] + mem["act_written_extra_norm_token"]) / sp_div
        per_token = split_token / tp + whole + mem["act_extra_attn_token"] / tp
        return (seq * b * per_token + masks / sp_div) / cp

    dense_written = written(mem["act_written_dense_token"])
    moe_written = written(mem["act_written_moe_token"]) if m.is_moe else 0
    written_all = p["n_dense_mlp_layers"] * dense_written + p["n_moe_layers"] * moe_written
    layer_avg = written_all / m.n_layers + naive * scores_layer
    share = mem["recompute_share"]
    first = k["layers_first_stage"]  # the first stage holds the most micro-batches
    if run.recompute == "full":
        # Recomputed layers keep their input, the others (partial recomputation) all.
        kept_whole = all_layers * first / m.n_layers + naive * first * scores_layer
        kept_stage = share * first * input_layer + (1 - share) * kept_whole
        working = layer_max
    else:
        kept_stage = all_layers * first / m.n_layers
        if run.recompute == "none":
            kept_stage += naive * first * scores_layer
        working = 0
    final_gpu = mem["mem_act_final"] / (sp_div * cp) if pp == 1 else 0
    # Never more than the step's m micro-batches (Megatron-Core caps the warm-up at them).
    in_flight = min(k["micro_batches_in_flight"] * k["interleave_factor"], k["_microbatches"])
    # The second stage's layers, (n_layers + 2) / pp, each keeping what stage 1's keep.
    kept_stage2 = kept_stage * (m.n_layers + 2) / pp / first * k["pp_split_active"]
    stage2 = kept_stage2 * k["micro_batches_in_flight_stage2"]
    # What waits for the backward pass, less the share offloaded to host memory.
    kept_gpu = max(kept_stage * in_flight, stage2) * (1 - run.act_offload_share)
    return {
        "_recompute_share": share,
        "act_values_unsplit": unsplit,
        "mem_act_dense_layer_gpu": dense_layer,
        "mem_act_moe_layer_gpu": moe_layer,
        "mem_act_scores_layer_gpu": scores_layer,
        "mem_act_input_layer_gpu": input_layer,
        "mem_act_layer_max_gpu": layer_max,
        "mem_act_dense_written_gpu": dense_written,
        "mem_act_moe_written_gpu": moe_written,
        "mem_act_layer_avg_gpu": layer_avg,
        "mem_act_kept_stage": kept_stage,
        "mem_act_working_gpu": working,
        "mem_act_final_gpu": final_gpu,
        "mem_act_kept_stage2": kept_stage2,
        "mem_act_kept_gpu": kept_gpu,
        "mem_activations_per_gpu": kept_gpu + working + final_gpu,
        "mem_logits_per_gpu": mem["mem_logits_live"] / (tp * cp) if pp == 1 else 0,
    }


def with_schedule(s: Scenario, lay: dict[str, float], sch: dict[str, float]) -> dict[str, float]:
    """The Parallelism keys that need the Schedule: days on the fewest GPUs, and the
    run's days and GPU cost at the predicted step time (what `sheetgen advise` ranks)."""
    run = s.run
    n_min = lay["n_gpus_min"]
    days_layout = sch["steps"] * lay["step_seconds_predicted"] / run.goodput / SECONDS_PER_DAY
    return {
        # No days where no count fits.
        "train_days_wall_at_min": (
            sch["train_days_wall"] * run.n_gpus / n_min if n_min != "none" else "–"
        ),
        "train_days_wall_layout": days_layout,
        "cost_usd_layout": run.n_gpus * days_layout * HOURS_PER_DAY * sch["gpu_price_used"],
    }
