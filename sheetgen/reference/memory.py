"""The Memory sheet: one GPU, the whole model, no sharding.

Static memory = parameters x bytes per parameter of the recipe (weights,
gradients, FP32 gradient-accumulation buffer, FP32 master weights, optimizer).

Activations per layer and micro-batch (b sequences of s tokens), counting the
tensors each matmul / nonlinearity keeps for the backward pass
(Korthikanti et al. 2022, section 4.1):

  values kept per token = 4h (two norm inputs, QKV input, MLP input)
                        + q + k + v widths (Q, K, V outputs)
                        + o width (input of the output projection)
                        + t*F (MLP: t = 4 tensors for SwiGLU, 2 for GeLU)
  Llama: 2sb(6h + 2h_kv + 4F) bytes;  GPT: 32sbh, + 2sbh dropout masks = 34sbh.
  Naive attention also keeps the a x s x s softmax output (2as^2 b bytes), and
  with dropout its mask and output: 5as^2 b in all.
  Full recomputation keeps one input per recomputed layer and one layer's working
  set; with ``recompute_layers`` > 0 only that many layers of each pipeline stage
  are recomputed (Megatron-LM's block method) and the others keep everything.

Activation profiles (``act_profile``) add what real frameworks keep beyond that
count, in bytes per token (FP32 = 4 bytes):
  formula      nothing (Korthikanti et al.'s count above);
  hf-eager     Hugging Face transformers' Llama in eager PyTorch, measured with
               torch.autograd.graph.saved_tensors_hooks (benchmarks/
               measure_hf_eager_activations.py): each RMSNorm keeps its FP32 input
               (4h) and FP32 1/rms (4) beside its normalized copy and output; SDPA /
               flash attention keeps the FP32 log-sum-exp per query head (4a); the
               final norm keeps the same after the last layer (2 x act x h + 4h + 4);
               logits: the FP32 log-softmax output (4 s b V, as ``logits_bytes``).
               nn.LayerNorm keeps FP32 mean and 1/std (8) instead of an FP32 input.
  megatron-te  Megatron-LM with Transformer Engine: fused norms keep FP32 1/rms (4;
               LayerNorm: mean and 1/std, 8), flash attention its FP32 log-sum-exp
               (4a; dropped with the core under selective recomputation, as is
               hf-eager's), and the fused SwiGLU keeps its 2F input only, so a gated MLP
               keeps 3 F-wide tensors instead of 4; the final norm its input, output
               and statistics.  With FP8 (peak_dtype fp8) Transformer Engine's linear
               layers keep the FP8 copy of their input that their GEMMs read (1 byte
               a value) for the weight gradient: the two norm outputs (QKV and MLP
               inputs, 2h) and the MLP's second GEMM input (F) are kept at 1 byte
               instead of act bytes; the output projection keeps an FP8 copy of the
               attention output beside the BF16 one flash attention keeps (+ o width
               bytes).  (NVIDIA Transformer Engine docs, "Using FP8 with Transformer
               Engine": the FP8 cast happens inside the linear layer; Micikevicius et
               al. 2022, arXiv:2209.05433, section 4: GEMM inputs in FP8, outputs in
               higher precision.)

Framework choices (issue 40; ``token_values``): the optimizer moments' precision
(``optimizer_state_dtype``: 8 / 4 / 2 bytes) and the master copy (``master_weights``);
FP8 caching of the linear layers' inputs under any profile (``act_fp8_cache``);
recomputed norms (their two outputs, 2h, and statistics dropped), MLA up-projections
(Q, K, V dropped; latents and O kept) and MLP activation (its input only: 2 F-wide
tensors gated, 1 GeLU); offloaded activations (``act_offload_share``) and the logits
live at once (``logits_chunks``).  ``token_values(options=False)`` is what a layer
writes, kept or not: the clock's memory-bound work reads it.
"""

from __future__ import annotations

from sheetgen.reference.finetune import finetune
from sheetgen.reference.params import mlp_matrices, params, qk_head_dim, v_head_dim
from sheetgen.scenarios.scenario import Scenario

FP32 = 4  # bytes of an FP32 value (norm statistics, log-sum-exp, FP32 norm inputs)


def mlp_act_tensors(s: Scenario, options: bool = True) -> int:
    """[s, b, F] tensors an MLP keeps: SwiGLU gate out, up out, SiLU out, product; GeLU in, out.

    Megatron's fused SwiGLU keeps its 2F-wide input and the product: 3.  With the
    activation recomputed (``recompute_mlp_act``; ``options`` False: as if not) only its
    input stays: 2 (gated), 1 (GeLU)."""
    gated = mlp_matrices(s.model) == 3
    if options and s.run.recompute_mlp_act:
        return 2 if gated else 1
    # LoRA without adapters on the MLP: the frozen down projection keeps no input.
    frozen = lora_frozen_mlp(s) if options else 0
    if not gated:
        return 2 - frozen
    return (3 if s.run.act_profile == "megatron-te" else 4) - frozen


def lora_frozen_mlp(s: Scenario) -> int:
    """1 under LoRA / QLoRA whose targets leave the MLP frozen (qv, qkvo): a frozen linear
    layer needs no weight gradient, so PyTorch's autograd does not keep its input (the MLP
    norm's output, the down projection's input) unless another operation does."""
    return int(s.run.recipe in ("lora", "qlora") and s.run.lora_targets != "all-linear")


# Bytes per parameter of Adam's two moments in each optimizer_state_dtype.
MOMENT_BYTES = {"fp32": 8, "bf16": 4, "8bit": 2}


def norm_extra_bytes(s: Scenario, options: bool = True) -> float:
    """Bytes per token one norm keeps beyond its input and output (act_profile); none
    when the norms are recomputed (``options`` False: as if not)."""
    profile, m = s.run.act_profile, s.model
    if profile == "formula" or (options and s.run.recompute_norms):
        return 0
    if m.norm != "rmsnorm":
        return 2 * FP32  # mean and 1/std
    return (FP32 * m.hidden_size if profile == "hf-eager" else 0) + FP32


def token_values(s: Scenario, act: float, options: bool = True) -> dict[str, float]:
    """What one layer keeps per token: values (x act bytes) of a dense and a MoE layer,
    the FP8 changes in bytes and the norm extras.  ``options`` False leaves out the
    framework choices of issue 40 (recomputed norms, MLA up-projections and MLP
    activation, FP8 caching): the tensors the layer writes, kept or not."""
    m, run = s.model, s.run
    h, a = m.hidden_size, m.n_heads
    dqk, dv = qk_head_dim(m), v_head_dim(m)
    kv_heads = a if m.is_mla else m.n_kv_heads
    # Q and O are a heads wide, K and V kv_heads wide (MLA expands K, V to all heads);
    # MLA with its up-projections recomputed keeps only O and the latents.
    up_recomputed = int(options and m.is_mla and run.recompute_up_proj == 1)
    attn_values = (1 - up_recomputed) * (a * dqk + kv_heads * dqk + kv_heads * dv) + a * dv
    if m.is_mla:
        attn_values += m.q_lora_rank + m.kv_lora_rank  # inputs of the up-projections
    # Two norm inputs always; the two norm outputs (QKV and MLP inputs) unless recomputed.
    # Under LoRA with the MLP frozen nothing keeps the MLP norm's output.
    frozen = lora_frozen_mlp(s) if options else 0
    norm_outputs = (2 - frozen) * h * (1 - (run.recompute_norms if options else 0))
    base = 2 * h + norm_outputs + attn_values
    t = mlp_act_tensors(s, options)
    moe_ffn = m.moe_ffn_size * (m.experts_per_token + m.n_shared_experts)
    # FP8 GEMM inputs kept at 1 byte (Transformer Engine); bytes per token, < 0 saves.
    cache = run.act_fp8_cache == 1 and options
    fp8_saved = int(run.peak_dtype == "fp8" and (run.act_profile == "megatron-te" or cache))
    o_width = a * dv
    # The second GEMM's input (F values) is kept only when the activation is not recomputed.
    fc2_kept = (1 - (run.recompute_mlp_act if options else 0)) * (1 - frozen)
    return {
        "up_recomputed": up_recomputed,
        "norm_outputs": norm_outputs,
        "attn_values": attn_values,
        "t": t,
        "dense": base + t * m.ffn_size,
        "moe": base + t * moe_ffn if m.is_moe else 0,
        "per_norm": norm_extra_bytes(s, options),
        "fp8_saved": fp8_saved,
        "fp8_whole": fp8_saved * (1 - act) * norm_outputs,
        "fp8_dense": fp8_saved * ((1 - act) * fc2_kept * m.ffn_size + o_width),
        "fp8_moe": fp8_saved * ((1 - act) * fc2_kept * moe_ffn + o_width) if m.is_moe else 0,
    }


def logits_peak_bytes(s: Scenario, act: float) -> float:
    """Bytes per logit alive at the loss's peak, by activation profile: formula the one
    FP32 copy Korthikanti et al. count; hf-eager 3 (PyTorch's log_softmax saves its
    output, and its backward holds the incoming and the outgoing gradient beside it);
    megatron-te the BF16 logits beside the FP32 copy its loss makes (then in place)."""
    run = s.run
    if run.act_profile == "hf-eager":
        return 3 * run.logits_bytes
    if run.act_profile == "megatron-te":
        return run.logits_bytes + act
    return run.logits_bytes


def recompute_share(s: Scenario) -> float:
    """The share of layers full recomputation rebuilds: recompute_layers of each
    stage's n_layers / pp (0 = all of them); 0 without full recomputation."""
    run = s.run
    if run.recompute != "full":
        return 0.0
    if run.recompute_layers == 0:
        return 1.0
    return min(1.0, run.recompute_layers * run.pp / s.model.n_layers)


def static_bytes(s: Scenario) -> dict[str, float]:
    """Bytes per parameter of each state: the recipe's, LoRA's averages over N, the
    moments' precision (optimizer_state_dtype) and the master copy (master_weights)."""
    run, recipe = s.run, s.recipe
    # LoRA / QLoRA (reference/finetune.py): frozen base + FP32 adapters, averaged over N.
    ft = finetune(s)
    lora = ft["lora_on"] == 1
    o_recipe = MOMENT_BYTES.get(run.optimizer_state_dtype, recipe.optimizer_bytes)
    return {
        "weight_bytes": ft["lora_weight_bytes_avg"] if lora else recipe.weight_bytes,
        "grad_bytes": ft["lora_grad_bytes_avg"] if lora else recipe.grad_bytes,
        "grad_accum_bytes": recipe.grad_accum_bytes,
        "master_bytes": recipe.master_bytes * run.master_weights,
        "optimizer_bytes": ft["lora_optimizer_bytes_avg"] if lora else o_recipe,
    }


def memory(s: Scenario) -> dict[str, float]:
    m, run, recipe = s.model, s.run, s.recipe
    p = params(m)
    n = p["params_total"]
    h, a = m.hidden_size, m.n_heads
    seq, b = run.seq_len, run.micro_batch
    act = recipe.act_bytes

    sb = static_bytes(s)
    bytes_per_param = sum(sb.values())
    mem_weights = n * sb["weight_bytes"]
    mem_grads = n * (sb["grad_bytes"] + sb["grad_accum_bytes"])
    mem_master = n * sb["master_bytes"]
    mem_optimizer = n * sb["optimizer_bytes"]
    mem_static = mem_weights + mem_grads + mem_master + mem_optimizer

    tv = token_values(s, act)
    wr = token_values(s, act, options=False)
    # What TP keeps whole of the written tensors: norm inputs and outputs, MLA latents.
    whole_written = 4 * h + (m.q_lora_rank + m.kv_lora_rank if m.is_mla else 0)
    fp8_whole = tv["fp8_whole"]
    masks_layer = m.dropout * 2 * seq * b * h * run.dropout_mask_bytes
    naive = run.attention == "naive"
    per_norm = tv["per_norm"]
    extra_norm = m.norms_per_layer * per_norm
    # The log-sum-exp belongs to the attention core: selective recomputation drops it.
    no_lse = run.act_profile == "formula" or naive or run.recompute == "selective"
    extra_attn = 0 if no_lse else FP32 * a
    extra_layer = seq * b * (extra_norm + extra_attn)
    act_dense_layer = (
        seq * b * (act * tv["dense"] + fp8_whole + tv["fp8_dense"]) + extra_layer + masks_layer
    )
    act_moe_layer = (
        seq * b * (act * tv["moe"] + fp8_whole + tv["fp8_moe"]) + extra_layer + masks_layer
        if m.is_moe
        else 0
    )
    kept_final = act * h * (2 - run.recompute_norms) + per_norm
    final_token = 0 if run.act_profile == "formula" else kept_final
    act_final = final_token * seq * b
    scores_layer = a * seq * seq * b * (act + m.dropout * (run.dropout_mask_bytes + act))
    n_moe = p["n_moe_layers"]
    n_dense = p["n_dense_mlp_layers"]
    act_input_layer = act * seq * b * h
    # The largest layer the model has (an all-MoE model has no dense-MLP layer to rebuild).
    act_layer_max = max(act_dense_layer if n_dense > 0 else 0, act_moe_layer) + (
        scores_layer if naive else 0
    )
    stored = n_dense * act_dense_layer + n_moe * act_moe_layer
    share = recompute_share(s)
    if run.recompute == "none":
        kept = stored + (m.n_layers * scores_layer if naive else 0)
    elif run.recompute == "selective":
        kept = stored
    else:
        # Recomputed layers keep their input; the others (partial recomputation) all.
        kept_whole = stored + (m.n_layers * scores_layer if naive else 0)
        kept = share * m.n_layers * act_input_layer + (1 - share) * kept_whole
    # Offloaded activations wait in host memory; a recomputed layer's working set stays.
    activations = kept * (1 - run.act_offload_share) + act_final
    if run.recompute == "full":
        activations += act_layer_max

    logits = run.logits_bytes * seq * b * m.vocab_size
    # At the loss's peak more than the FP32 logits are alive: eager PyTorch keeps the
    # log-softmax output and, in its backward, the incoming and outgoing gradients (3
    # FP32 copies); Megatron-LM's vocab-parallel loss the BF16 logits beside their FP32
    # copy, which it turns into the softmax in place.  One chunk of them at a time.
    peak_bytes = logits_peak_bytes(s, act)
    logits_live = peak_bytes * seq * b * m.vocab_size / run.logits_chunks
    total = mem_static + activations + logits_live + run.overhead_bytes
    gpu_mem = s.hardware.mem_gb * 10**9
    return {
        **sb,
        "act_bytes": act,
        "bytes_per_param": bytes_per_param,
        "mem_weights": mem_weights,
        "mem_grads": mem_grads,
        "mem_master": mem_master,
        "mem_optimizer": mem_optimizer,
        "mem_static": mem_static,
        "lora_frozen_mlp": lora_frozen_mlp(s),
        "attn_up_recomputed": tv["up_recomputed"],
        "act_norm_outputs_token": tv["norm_outputs"],
        "act_values_attn": tv["attn_values"],
        "mlp_act_tensors": tv["t"],
        "act_profile_norm_extra": per_norm,
        "act_extra_norm_token": extra_norm,
        "act_extra_attn_token": extra_attn,
        "act_final_token": final_token,
        "mem_act_final": act_final,
        "act_values_dense_layer": tv["dense"],
        "act_values_moe_layer": tv["moe"],
        "act_fp8_saved": tv["fp8_saved"],
        "act_fp8_whole_token": fp8_whole,
        "act_fp8_dense_token": tv["fp8_dense"],
        "act_fp8_moe_token": tv["fp8_moe"],
        # The tensors a layer writes, kept or not (no issue-40 option): the clock's
        # memory-bound work reads and writes them.
        "act_written_dense_token": act * (wr["dense"] - whole_written) + wr["fp8_dense"],
        "act_written_moe_token": (
            act * (wr["moe"] - whole_written) + wr["fp8_moe"] if m.is_moe else 0
        ),
        "act_written_whole_token": act * whole_written + wr["fp8_whole"],
        "act_written_extra_norm_token": m.norms_per_layer * wr["per_norm"],
        "mem_act_masks_layer": masks_layer,
        "mem_act_dense_layer": act_dense_layer,
        "mem_act_moe_layer": act_moe_layer,
        "mem_act_scores_layer": scores_layer,
        "mem_act_naive_scores": m.n_layers * scores_layer,
        "mem_act_input_layer": act_input_layer,
        "attn_is_naive": int(naive),
        "mem_act_layer_max": act_layer_max,
        "mem_act_stored": stored,
        "mem_act_kept": kept,
        "recompute_share": share,
        "mem_activations": activations,
        "mem_logits": logits,
        "logits_peak_bytes": peak_bytes,
        "mem_logits_live": logits_live,
        "mem_overhead": run.overhead_bytes,
        "mem_total": total,
        "mem_gpu_share": total / gpu_mem,
        # Calibration: a pilot run's measured peak scales the modelled one.
    }
