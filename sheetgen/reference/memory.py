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
"""

from __future__ import annotations

from sheetgen.reference.finetune import finetune
from sheetgen.reference.params import mlp_matrices, params, qk_head_dim, v_head_dim
from sheetgen.scenarios.scenario import Scenario

FP32 = 4  # bytes of an FP32 value (norm statistics, log-sum-exp, FP32 norm inputs)


def mlp_act_tensors(s: Scenario) -> int:
    """[s, b, F] tensors an MLP keeps: SwiGLU gate out, up out, SiLU out, product; GeLU in, out.

    Megatron's fused SwiGLU keeps its 2F-wide input and the product: 3."""
    if mlp_matrices(s.model) != 3:
        return 2
    return 3 if s.run.act_profile == "megatron-te" else 4


def norm_extra_bytes(s: Scenario) -> float:
    """Bytes per token one norm keeps beyond its input and output (act_profile)."""
    profile, m = s.run.act_profile, s.model
    if profile == "formula":
        return 0
    if m.norm != "rmsnorm":
        return 2 * FP32  # mean and 1/std
    return (FP32 * m.hidden_size if profile == "hf-eager" else 0) + FP32


def recompute_share(s: Scenario) -> float:
    """The share of layers full recomputation rebuilds: recompute_layers of each
    stage's n_layers / pp (0 = all of them); 0 without full recomputation."""
    run = s.run
    if run.recompute != "full":
        return 0.0
    if run.recompute_layers == 0:
        return 1.0
    return min(1.0, run.recompute_layers * run.pp / s.model.n_layers)


def memory(s: Scenario) -> dict[str, float]:
    m, run, recipe = s.model, s.run, s.recipe
    p = params(m)
    n = p["params_total"]
    h, a = m.hidden_size, m.n_heads
    seq, b = run.seq_len, run.micro_batch
    act = recipe.act_bytes

    # LoRA / QLoRA (reference/finetune.py): frozen base + FP32 adapters, averaged over N.
    ft = finetune(s)
    lora = ft["lora_on"] == 1
    w_b = ft["lora_weight_bytes_avg"] if lora else recipe.weight_bytes
    g_b = ft["lora_grad_bytes_avg"] if lora else recipe.grad_bytes
    o_b = ft["lora_optimizer_bytes_avg"] if lora else recipe.optimizer_bytes
    bytes_per_param = w_b + g_b + recipe.grad_accum_bytes + recipe.master_bytes + o_b
    mem_weights = n * w_b
    mem_grads = n * (g_b + recipe.grad_accum_bytes)
    mem_master = n * recipe.master_bytes
    mem_optimizer = n * o_b
    mem_static = mem_weights + mem_grads + mem_master + mem_optimizer

    dqk, dv = qk_head_dim(m), v_head_dim(m)
    kv_heads = a if m.is_mla else m.n_kv_heads
    # Q and O are a heads wide, K and V kv_heads wide (MLA expands K, V to all heads).
    attn_values = a * dqk + kv_heads * dqk + kv_heads * dv + a * dv
    if m.is_mla:
        attn_values += m.q_lora_rank + m.kv_lora_rank  # inputs of the up-projections
    base = 4 * h + attn_values
    t = mlp_act_tensors(s)
    values_dense = base + t * m.ffn_size
    values_moe = (
        base + t * m.moe_ffn_size * (m.experts_per_token + m.n_shared_experts) if m.is_moe else 0
    )
    masks_layer = m.dropout * 2 * seq * b * h * run.dropout_mask_bytes
    naive = run.attention == "naive"
    per_norm = norm_extra_bytes(s)
    extra_norm = m.norms_per_layer * per_norm
    # The log-sum-exp belongs to the attention core: selective recomputation drops it.
    no_lse = run.act_profile == "formula" or naive or run.recompute == "selective"
    extra_attn = 0 if no_lse else FP32 * a
    extra_layer = seq * b * (extra_norm + extra_attn)
    # FP8 GEMM inputs kept at 1 byte (Transformer Engine); bytes per token, < 0 saves.
    fp8_saved = int(run.peak_dtype == "fp8" and run.act_profile == "megatron-te")
    o_width = a * dv
    fp8_whole = fp8_saved * (1 - act) * 2 * h
    fp8_dense = fp8_saved * ((1 - act) * m.ffn_size + o_width)
    moe_ffn = m.moe_ffn_size * (m.experts_per_token + m.n_shared_experts)
    fp8_moe = fp8_saved * ((1 - act) * moe_ffn + o_width) if m.is_moe else 0
    act_dense_layer = (
        seq * b * (act * values_dense + fp8_whole + fp8_dense) + extra_layer + masks_layer
    )
    act_moe_layer = (
        seq * b * (act * values_moe + fp8_whole + fp8_moe) + extra_layer + masks_layer
        if m.is_moe
        else 0
    )
    final_token = 0 if run.act_profile == "formula" else 2 * act * h + per_norm
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
        activations = stored + (m.n_layers * scores_layer if naive else 0)
    elif run.recompute == "selective":
        activations = stored
    else:
        # Recomputed layers keep their input; the others (partial recomputation) all.
        kept_whole = stored + (m.n_layers * scores_layer if naive else 0)
        activations = share * m.n_layers * act_input_layer + (1 - share) * kept_whole
        activations += act_layer_max
    activations += act_final

    logits = run.logits_bytes * seq * b * m.vocab_size
    total = mem_static + activations + logits + run.overhead_bytes
    gpu_mem = s.hardware.mem_gb * 10**9
    return {
        "weight_bytes": w_b,
        "grad_bytes": g_b,
        "grad_accum_bytes": recipe.grad_accum_bytes,
        "master_bytes": recipe.master_bytes,
        "optimizer_bytes": o_b,
        "act_bytes": act,
        "bytes_per_param": bytes_per_param,
        "mem_weights": mem_weights,
        "mem_grads": mem_grads,
        "mem_master": mem_master,
        "mem_optimizer": mem_optimizer,
        "mem_static": mem_static,
        "act_values_attn": attn_values,
        "mlp_act_tensors": t,
        "act_profile_norm_extra": per_norm,
        "act_extra_norm_token": extra_norm,
        "act_extra_attn_token": extra_attn,
        "act_final_token": final_token,
        "mem_act_final": act_final,
        "act_values_dense_layer": values_dense,
        "act_values_moe_layer": values_moe,
        "act_fp8_saved": fp8_saved,
        "act_fp8_whole_token": fp8_whole,
        "act_fp8_dense_token": fp8_dense,
        "act_fp8_moe_token": fp8_moe,
        "mem_act_masks_layer": masks_layer,
        "mem_act_dense_layer": act_dense_layer,
        "mem_act_moe_layer": act_moe_layer,
        "mem_act_scores_layer": scores_layer,
        "mem_act_naive_scores": m.n_layers * scores_layer,
        "mem_act_input_layer": act_input_layer,
        "attn_is_naive": int(naive),
        "mem_act_layer_max": act_layer_max,
        "mem_act_stored": stored,
        "recompute_share": share,
        "mem_activations": activations,
        "mem_logits": logits,
        "mem_overhead": run.overhead_bytes,
        "mem_total": total,
        "mem_gpu_share": total / gpu_mem,
        # Calibration: a pilot run's measured peak scales the modelled one.
    }
