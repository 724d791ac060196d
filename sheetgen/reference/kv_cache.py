"""The KV cache sheet: inference memory for keys and values, and inference FLOPs.

Per token and layer a cache keeps K and V: 2 x n_kv x d_h values (Austin et
al. 2025, How to Scale Your Model, part 4, 'Key-Value caching').  MLA
(DeepSeek-V3) keeps one compressed latent of
kv_lora_rank plus the shared RoPE key of qk_rope_head_dim.  The MHA
equivalent (n_kv = a) is shown for comparison.

Served weights take the format's bytes plus any quantization-scale bytes per
parameter (0 unless set).
"""

from __future__ import annotations

from sheetgen.reference.params import params, qk_head_dim, v_head_dim
from sheetgen.scenario import Scenario


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
    per_seq = per_token * run.inf_context
    return {
        "kv_dtype_bytes": kv_b,
        "kv_values_per_token_layer": values,
        "kv_bytes_per_token": per_token,
        "kv_bytes_per_token_mha": per_token_mha,
        "kv_mha_ratio": per_token_mha / per_token,
        "kv_bytes_per_sequence": per_seq,
        "kv_bytes_batch": per_seq * run.inf_batch,
        "weight_dtype_bytes": w_b,
        "inf_weight_bytes_per_param": w_b + run.quant_scale_bytes,
        "inf_weight_bytes": p["params_total"] * (w_b + run.quant_scale_bytes),
        "inf_flops_per_token": 2 * p["params_active"],
    }
