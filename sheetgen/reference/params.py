"""The Params sheet: exact parameter counts by component.

Notation: L layers, h hidden size, a query heads, n_kv KV heads, d_h head dim,
F dense MLP size, V vocabulary.  A gated MLP (SwiGLU) has 3 matrices h x F, a
GeLU MLP 2.  RMSNorm has h weights, LayerNorm 2h (scale and shift).
Query/key norms (``qk_norm``): 1 gives one RMSNorm of d_h for Q and one for K,
shared by the heads (Qwen 3, Gemma 3: 2 d_h weights per layer); 2 one over the whole
projection (OLMo 2: (a + n_kv) d_h).  Attention sinks (gpt-oss): a learned logit per
query head and layer (a weights).  Both are counted in the attention per layer.
Classic GPT: N = hV + L(12h^2 + 13h) + 2h (Llama 3 config.json on Hugging Face;
Dubey et al. 2024, The Llama 3 Herd of Models, Table 3).
"""

from __future__ import annotations

from sheetgen.scenarios.scenario import Model


def norm_weights(m: Model) -> int:
    """Parameters of one norm over a vector of size 1 (1 for RMSNorm, 2 for LayerNorm)."""
    return 2 if m.norm == "layernorm" else 1


def mlp_matrices(m: Model) -> int:
    return 3 if m.mlp == "gated" else 2


def qk_head_dim(m: Model) -> int:
    """Query/key width per head (MLA: nope + rope parts)."""
    return m.qk_nope_head_dim + m.qk_rope_head_dim if m.is_mla else m.head_dim


def v_head_dim(m: Model) -> int:
    return m.v_head_dim if m.is_mla else m.head_dim


def kv_heads(m: Model) -> int:
    """Key/value heads in compute: n_kv; MLA expands its latent to one per query head."""
    return m.n_heads if m.is_mla else m.n_kv_heads


def tp_splits_heads(m: Model, tp: int) -> bool:
    """Whether ``tp`` GPUs can split the attention heads, the rule vLLM enforces
    (vllm/model_executor/models/llama.py, LlamaAttention): tp divides the query heads,
    and either tp divides the key/value heads or it is a multiple of them (each then
    copied on tp / n_kv GPUs). MLA's key/value heads are its query heads (vLLM's
    deepseek_v2.py keeps the latent whole on every GPU and splits only the query heads).
    Megatron-Core asks more of training: it divides the query groups by tp
    (megatron/core/transformer/attention.py), so copies are a warning there."""
    kv = kv_heads(m)
    return m.n_heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def params(m: Model) -> dict[str, float]:
    h, a, kv, dh = m.hidden_size, m.n_heads, m.n_kv_heads, m.head_dim
    nw = norm_weights(m)
    mats = mlp_matrices(m)
    dqk, dv = qk_head_dim(m), v_head_dim(m)
    # Standard attention (MHA / GQA / MQA): Q is h x a*d_h, K and V are h x n_kv*d_h.
    q_std = h * a * dh + m.qkv_bias * a * dh
    kv_std = 2 * (h * kv * dh + m.qkv_bias * kv * dh)
    # MLA: Q through a low-rank latent (with its own norm) unless q_lora_rank is 0;
    # K and V through a compressed latent of kv_lora_rank plus a shared RoPE key.
    if m.q_lora_rank > 0:
        q_mla = h * m.q_lora_rank + nw * m.q_lora_rank + m.q_lora_rank * a * dqk
    else:
        q_mla = h * a * dqk
    kv_mla = (
        h * (m.kv_lora_rank + m.qk_rope_head_dim)
        + nw * m.kv_lora_rank
        + m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim)
    )
    attn_q = q_mla if m.is_mla else q_std
    attn_kv = kv_mla if m.is_mla else kv_std
    attn_o = a * dv * h + m.out_bias * h
    qk_norm_width = {1: 2 * dh, 2: (a + kv) * dh}.get(m.qk_norm, 0)
    qk_norm = nw * qk_norm_width
    sinks = m.attn_sinks * a
    attn_layer = attn_q + attn_kv + attn_o + qk_norm + sinks

    def mlp(width: int) -> int:
        return mats * h * width + m.mlp_bias * ((mats - 1) * width + h)

    mlp_layer = mlp(m.ffn_size)
    norm_layer = m.norms_per_layer * nw * h
    if m.is_moe:
        expert = mlp(m.moe_ffn_size)
        router = m.n_experts * h + m.router_bias * m.n_experts
        moe_layer = (m.n_experts + m.n_shared_experts) * expert + router
        moe_layer_active = (m.experts_per_token + m.n_shared_experts) * expert + router
        n_moe = m.n_layers - m.n_dense_layers
    else:
        expert = router = moe_layer = moe_layer_active = 0
        n_moe = 0
    # The routed experts' weight matrices (no biases): what an expert-only weight format
    # such as gpt-oss's MXFP4 stores in 4 bits (its biases, router, attention stay BF16).
    expert_matrices = n_moe * m.n_experts * mats * h * m.moe_ffn_size if m.is_moe else 0
    n_dense = m.n_layers - n_moe

    embedding = m.vocab_size * h
    pos_embedding = m.pos_embeddings * h
    output = 0 if m.tied_embeddings else m.vocab_size * h
    final_norm = nw * h
    outside = embedding + pos_embedding + output + final_norm
    shared_layers = m.n_layers * (attn_layer + norm_layer)
    layers_total = shared_layers + n_dense * mlp_layer + n_moe * moe_layer
    layers_active = shared_layers + n_dense * mlp_layer + n_moe * moe_layer_active
    return {
        "norm_weights": nw,
        "mlp_matrices": mats,
        "is_mla": int(m.is_mla),
        "is_moe": int(m.is_moe),
        "attn_qk_dim": dqk,
        "attn_v_dim": dv,
        "attn_kv_heads": kv_heads(m),
        "params_attn_q_std": q_std,
        "params_attn_q_mla": q_mla,
        "params_attn_kv_std": kv_std,
        "params_attn_kv_mla": kv_mla,
        "params_attn_q": attn_q,
        "params_attn_kv": attn_kv,
        "params_attn_o": attn_o,
        "params_qk_norm": qk_norm,
        "params_attn_sinks": sinks,
        "params_attn_layer": attn_layer,
        "params_mlp_layer": mlp_layer,
        "params_norm_layer": norm_layer,
        "params_expert": expert,
        "params_router": router,
        "params_moe_layer": moe_layer,
        "params_moe_layer_active": moe_layer_active,
        "n_moe_layers": n_moe,
        "n_dense_mlp_layers": n_dense,
        "params_expert_matrices": expert_matrices,
        "params_layers": layers_total,
        "params_embedding": embedding,
        "params_pos_embedding": pos_embedding,
        "params_output": output,
        "params_final_norm": final_norm,
        "params_total": layers_total + outside,
        "params_active": layers_active + outside,
        "params_12lh2": 12 * m.n_layers * h * h,
    }
