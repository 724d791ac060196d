"""The FLOPs sheet: per-token FLOPs by matrix multiply, training totals, MFU/HFU.

A matmul [m, k] x [k, n] costs 2mkn FLOPs forward and twice that backward, so
training costs 3x forward (Austin et al. 2025, How to Scale Your Model, part 4,
'Counting Dots').  Per token and layer:
Q, K, V, O projections and each MLP matrix cost 2 x (their weights); the
attention core (QK^T and probabilities x V) costs 2 s a (d_qk + d_v) forward,
times the causal factor, times the share windowed layers keep (their pairs over a
causal layer's, averaged over the layers: reference.kv_cache.window_layer_share).
The LM head costs 2Vh.  The input embedding is a
lookup (0 FLOPs).  6N (N = active parameters) is shown beside it, and the
Megatron closed form 72 L h^2 (1 + s/6h + V/12hL) per token for GPT-style models.
LoRA / QLoRA recipes skip the frozen weights' weight gradients and add the adapters'
6 x trainable (sheetgen/reference/finetune.py, ``lora_flops``).
"""

from __future__ import annotations

from sheetgen.reference.finetune import finetune, lora_flops
from sheetgen.reference.kv_cache import window_layer_share, window_pair_share
from sheetgen.reference.memory import recompute_share
from sheetgen.reference.params import mlp_matrices, params, qk_head_dim, v_head_dim
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import TERA


def flops(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    p = params(m)
    h, a, seq = m.hidden_size, m.n_heads, run.seq_len
    dqk, dv = qk_head_dim(m), v_head_dim(m)
    mats = mlp_matrices(m)
    if m.is_mla:
        q_w = a * dqk
        q_mm = h * m.q_lora_rank + m.q_lora_rank * q_w if m.q_lora_rank > 0 else h * q_w
        kv_mm = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * a * (
            m.qk_nope_head_dim + m.v_head_dim
        )
    else:
        q_mm = h * a * m.head_dim
        kv_mm = 2 * h * m.n_kv_heads * m.head_dim
    o_mm = a * dv * h
    fwd_q, fwd_kv, fwd_o = 2 * q_mm, 2 * kv_mm, 2 * o_mm
    fwd_mlp = 2 * mats * h * m.ffn_size
    fwd_moe = (
        2
        * (mats * h * m.moe_ffn_size * (m.experts_per_token + m.n_shared_experts) + h * m.n_experts)
        if m.is_moe
        else 0
    )
    # Windowed attention: the core averaged over the layers (reference.kv_cache).
    pair_share = window_pair_share(seq, m.sliding_window, m.attn_chunked)
    layer_share = window_layer_share(m, seq)
    fwd_core = 2 * run.causal_factor * seq * a * (dqk + dv) * layer_share
    fwd_lm_head = 2 * m.vocab_size * h
    L = m.n_layers
    fwd = (
        L * (fwd_q + fwd_kv + fwd_o + fwd_core)
        + p["n_dense_mlp_layers"] * fwd_mlp
        + p["n_moe_layers"] * fwd_moe
        + fwd_lm_head
    )
    # LoRA / QLoRA (reference/finetune.py): frozen weights need no weight gradient.
    ft = finetune(s)
    lora = lora_flops(int(ft["lora_on"]), ft["lora_params_trainable"], fwd, L * fwd_core)
    per_token = 3 * fwd - lora["lora_flops_wgrad_skipped"] + lora["lora_flops_adapters"]
    attn_per_token = 3 * L * fwd_core
    six_n = 6 * p["params_active"]
    megatron = 72 * L * h * h * (1 + seq / (6 * h) + m.vocab_size / (12 * h * L))
    # Korthikanti et al.'s published hardware FLOPs with selective recomputation.
    megatron_hw = 72 * L * h * h * (1 + seq / (3 * h) + m.vocab_size / (12 * h * L))
    if run.recompute == "none":
        recompute = 0.0
    elif run.recompute == "selective":
        # The backward pass recomputes the attention core's forward (QK^T, softmax, x V).
        recompute = L * fwd_core
    else:
        # One more forward of the recomputed layers (all of them unless recompute_layers).
        recompute = recompute_share(s) * (fwd - fwd_lm_head)
    hw_per_token = per_token + recompute
    peak = s.hardware.peak_fp8_tflops if run.peak_dtype == "fp8" else s.hardware.peak_bf16_tflops
    peak_flops = peak * TERA
    tokens = run.train_tokens
    # The attention core's hardware FLOPs: selective recomputation redoes its forward,
    # full recomputation in the layers it rebuilds.
    redone = {"none": 0.0, "selective": 1.0}.get(run.recompute, recompute_share(s))
    attn_hw = attn_per_token + redone * L * fwd_core
    return {
        "flops_fwd_q": fwd_q,
        "flops_fwd_kv": fwd_kv,
        "flops_fwd_o": fwd_o,
        "flops_fwd_mlp": fwd_mlp,
        "flops_fwd_moe": fwd_moe,
        "flops_window_pair_share": pair_share,
        "flops_attn_layer_share": layer_share,
        "flops_fwd_attn_core": fwd_core,
        "flops_fwd_lm_head": fwd_lm_head,
        "flops_fwd_per_token": fwd,
        **lora,
        "lora_flops_vs_full": per_token / (3 * fwd),
        "flops_per_token": per_token,
        "flops_attn_per_token": attn_per_token,
        "flops_attn_share": attn_per_token / per_token,
        "flops_6n_per_token": six_n,
        "flops_megatron_per_token": megatron,
        "flops_megatron_hw_per_token": megatron_hw,
        "flops_recompute_per_token": recompute,
        "flops_hw_per_token": hw_per_token,
        "flops_attn_hw_per_token": attn_hw,
        "flops_train": per_token * tokens,
        "flops_train_6nd": six_n * tokens,
        "flops_train_hardware": hw_per_token * tokens,
        "peak_flops": peak_flops,
    }


def mfu_from_throughput(
    tokens_per_s_per_gpu: float, flops_per_token: float, peak_flops: float
) -> float:
    """MFU implied by a measured throughput: tokens/s/GPU x FLOPs per token / peak."""
    return tokens_per_s_per_gpu * flops_per_token / peak_flops


def throughput_from_mfu(mfu: float, flops_per_token: float, peak_flops: float) -> float:
    """Tokens/s/GPU at a given MFU: MFU x peak / FLOPs per token."""
    return mfu * peak_flops / flops_per_token
