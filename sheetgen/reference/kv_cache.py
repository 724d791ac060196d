"""The KV cache sheet: inference memory for keys and values, and inference FLOPs.

Per token and layer a cache keeps K and V: 2 x n_kv x d_h values (Austin et
al. 2025, How to Scale Your Model, part 4, 'Key-Value caching').  MLA
(DeepSeek-V3) keeps one compressed latent of
kv_lora_rank plus the shared RoPE key of qk_rope_head_dim.  The MHA
equivalent (n_kv = a) is shown for comparison.

Windowed attention (Jiang et al. 2023, Mistral 7B, section 2; Gemma Team 2024,
Gemma 2, section 2): ``local_layers`` of the L layers attend to, and so cache, only
the last ``sliding_window`` tokens (a rolling buffer); the other L - local layers
(global) cache every token.  A sequence of c tokens caches
    global bytes per token x c + local bytes per token x min(c, window),
where the bytes per token of a group of layers = layers x values x bytes.  Llama 4's
chunked layers (``attn_chunked``) attend within fixed chunks of ``sliding_window``
tokens: a chunked layer never caches more than one chunk, so the same min(c, chunk)
bounds its cache (its end-of-chunk peak, what a server must hold room for).  Without a
window (local_layers 0) this is the per-token cache x c, as before.

Served weights take the format's bytes plus any quantization-scale bytes per
parameter (0 unless set).
"""

from __future__ import annotations

import math

from sheetgen.reference.params import params, qk_head_dim, v_head_dim
from sheetgen.scenarios.scenario import Model, Scenario


def window_pair_share(seq: float, window: int, chunked: int = 0) -> float:
    """Share of a causal layer's query-key pairs a windowed layer computes, over a
    sequence of ``seq`` tokens.  Query i (1-based) attends to min(i, W) keys, so a
    windowed layer computes S W - W (W - 1) / 2 pairs when S > W (the first W queries
    see i keys, the other S - W see W), a causal layer S (S + 1) / 2; on average a
    query attends to W - W (W - 1) / (2 S) keys instead of (S + 1) / 2.  1 when the
    window covers the sequence (or there is none)."""
    if window <= 0 or seq <= window:
        return 1.0
    if chunked:
        # Chunked attention (Llama 4): a query sees only the keys of its own chunk of W,
        # so q whole chunks give W (W + 1) / 2 pairs each and the last r tokens r (r + 1) / 2.
        q = math.floor(seq / window)
        r = seq - q * window
        pairs = q * window * (window + 1) / 2 + r * (r + 1) / 2
    else:
        pairs = seq * window - window * (window - 1) / 2
    return pairs / (seq * (seq + 1) / 2)


def window_layer_share(m: Model, seq: float) -> float:
    """The attention core's FLOPs with the window / without it, averaged over the
    layers: 1 - local / L x (1 - the windowed layers' pair share)."""
    share = window_pair_share(seq, m.sliding_window, m.attn_chunked)
    return 1 - m.local_layers / m.n_layers * (1 - share)


def kv_cache(s: Scenario) -> dict[str, float]:
    m, run = s.model, s.run
    p = params(m)
    kv_b = s.tables.dtype(run.kv_dtype)
    w_b = s.tables.dtype(run.weight_dtype)
    if m.is_mla:
        values = m.kv_lora_rank + m.qk_rope_head_dim
    else:
        values = 2 * m.n_kv_heads * m.head_dim
    values_mha = m.n_heads * (qk_head_dim(m) + v_head_dim(m))
    per_token = m.n_layers * values * kv_b
    per_token_mha = m.n_layers * values_mha * kv_b
    per_token_global = (m.n_layers - m.local_layers) * values * kv_b
    per_token_local = m.local_layers * values * kv_b
    local_tokens = min(run.inf_context, m.sliding_window)
    per_seq = per_token_global * run.inf_context + per_token_local * local_tokens
    return {
        "kv_dtype_bytes": kv_b,
        "kv_values_per_token_layer": values,
        "kv_bytes_per_token": per_token,
        "kv_bytes_per_token_mha": per_token_mha,
        "kv_mha_ratio": per_token_mha / per_token,
        "kv_global_layers": m.n_layers - m.local_layers,
        "kv_bytes_per_token_global": per_token_global,
        "kv_bytes_per_token_local": per_token_local,
        "kv_local_tokens": local_tokens,
        "kv_bytes_per_sequence": per_seq,
        "kv_window_saving": per_token * run.inf_context / per_seq,
        "kv_bytes_batch": per_seq * run.inf_batch,
        "weight_dtype_bytes": w_b,
        "inf_weight_bytes_per_param": w_b + run.quant_scale_bytes,
        "inf_weight_bytes": p["params_total"] * (w_b + run.quant_scale_bytes),
        "inf_flops_per_token": 2 * p["params_active"],
    }
