"""What one inference request needs, whatever the replica that serves it.

The Inference and Serving sheets both size a replica for requests of ``prompt_len``
+ ``output_len`` tokens; these quantities depend on the model and the request only,
not on the GPUs per replica (tp), so both sheets read them from here and neither
module imports the other.

  the request against the model's context: prompt + output longer than
      ``context_limit`` (config.json max_position_embeddings; 0 = unknown, not
      checked) runs on positions the model was not trained on (a Checks warning);
  paged KV cache: a request holds ceil(tokens / kv_block_tokens) x kv_block_tokens
      tokens of cache (Kwon et al. 2023, vLLM); a cache of c tokens holds global
      bytes per token x c + local bytes per token x min(c, window) (KV cache sheet);
  average context while decoding: P + O/2;
  keys a decode query attends to: the average context in global layers, at most the
      window in windowed ones, averaged over the layers;
  attention-core FLOPs per token per attended token: A = 2 L a (d_qk + d_v), as the
      FLOPs sheet counts the core;
  GPUs per replica when not given: of the candidates t = 1, 2, 4, ... (SERVE_TP_SLOTS
      of them) that split the heads (params.tp_splits_heads: t divides the query heads
      and divides the KV heads or is a multiple of them, vLLM's rule; t = 1 always
      does), the smallest up to the node on which the sheet's request fits, else the
      largest in the node (each sheet says what "fits" means for it).
"""

from __future__ import annotations

import math

from sheetgen.reference.inputs import num_text
from sheetgen.reference.kv_cache import kv_cache, window_layer_share
from sheetgen.reference.params import qk_head_dim, tp_splits_heads, v_head_dim
from sheetgen.scenarios.run_fields import SERVE_TP_SLOTS
from sheetgen.scenarios.scenario import Model, Scenario

TP_CANDIDATES = tuple(2 ** (n - 1) for n in range(1, SERVE_TP_SLOTS + 1))  # 1, 2, 4, ...


def kv_gpu_share(n_kv_heads: int, tp: int, mla: bool) -> float:
    """Share of a replica's KV cache one GPU holds with tp-way tensor parallelism."""
    if mla:
        return 1.0
    return math.ceil(n_kv_heads / tp) / n_kv_heads


def cache_bytes(kv: dict[str, float], window: int, tokens: float) -> float:
    """Bytes of a cache holding ``tokens`` tokens (whole replica), from the KV cache
    sheet's bytes per token of the global and the windowed layers."""
    return kv["kv_bytes_per_token_global"] * tokens + kv["kv_bytes_per_token_local"] * min(
        tokens, window
    )


def attended(m: Model, ctx: float) -> float:
    """Keys a decode query attends to at context ``ctx``, averaged over the layers."""
    return ((m.n_layers - m.local_layers) * ctx + m.local_layers * min(ctx, m.sliding_window)) / (
        m.n_layers
    )


def request(s: Scenario) -> dict[str, float]:
    """The Inference-sheet keys that do not depend on the GPUs per replica."""
    m, run = s.model, s.run
    kv = kv_cache(s)
    prompt, out_len = run.prompt_len, run.output_len
    block = run.kv_block_tokens
    request_tokens = prompt + out_len
    seq_kv_tokens = math.ceil(request_tokens / block) * block
    prompt_kv_tokens = math.ceil(prompt / block) * block
    avg_ctx = prompt + out_len / 2
    sw_avg_ctx = out_len + prompt / 2
    attn_flops = 2 * m.n_layers * m.n_heads * (qk_head_dim(m) + v_head_dim(m))
    return {
        "inf_request_tokens": request_tokens,
        "inf_context_note": context_note(m, request_tokens),
        "inf_kv_tokens_per_seq": seq_kv_tokens,
        "inf_prompt_kv_tokens": prompt_kv_tokens,
        "inf_kv_bytes_per_seq": cache_bytes(kv, m.sliding_window, seq_kv_tokens),
        "inf_prompt_kv_bytes": cache_bytes(kv, m.sliding_window, prompt_kv_tokens),
        "inf_prefill_attn_share": window_layer_share(m, prompt),
        "inf_swap_prefill_attn_share": window_layer_share(m, out_len),
        "inf_decode_avg_context": avg_ctx,
        "inf_swap_avg_context": sw_avg_ctx,
        "inf_decode_attended_tokens": attended(m, avg_ctx),
        "inf_swap_attended_tokens": attended(m, sw_avg_ctx),
        "inf_attn_flops_per_ctx_token": attn_flops,
    }


def context_note(m: Model, request_tokens: int) -> str:
    """The text "OK", or the request's length against the model's context."""
    if 0 < m.context_limit < request_tokens:
        return (
            f"request of {num_text(request_tokens)} tokens beyond the model's "
            f"{num_text(m.context_limit)} tokens"
        )
    return "OK"


def possible_tps(m: Model) -> list[int]:
    """1/0 for each of TP_CANDIDATES: whether it splits the model's heads."""
    return [int(tp_splits_heads(m, t)) for t in TP_CANDIDATES]


def smallest_fitting_tp(
    prefix: str, fits: list[int], possible: list[int], node: int
) -> tuple[int, dict[str, int]]:
    """The tp chosen from ``fits`` (1/0 for each of TP_CANDIDATES, the node and the
    heads already tested): the smallest that fits, else the largest within ``node``
    that splits the heads (``possible``; tp 1 always does); with the running keys
    ``{prefix}_first_<n>`` (smallest fitting so far, 0 before one) and
    ``{prefix}_within_<n>`` (largest possible within the node so far) the sheets show."""
    keys: dict[str, int] = {}
    first = within = 0
    for n, (t, fit, ok) in enumerate(zip(TP_CANDIDATES, fits, possible, strict=True), start=1):
        first = first or (t if fit else 0)
        within = t if t <= node and ok else within
        keys[f"{prefix}_first_{n}"] = first
        keys[f"{prefix}_within_{n}"] = within
    return (first or within), keys
