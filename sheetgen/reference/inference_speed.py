"""The Inference sheet's speed and cost: the batch that runs, prefill, decode, latency.

The batch that runs (issue 39): an engine admits only the sequences its paged KV cache
holds, so ``inf_batch_run`` = min(``inf_batch``, floor(``inf_kv_mem_fraction`` x the
memory left for the cache / the cache of the average sequence in flight)), at least 1
(the batch typed is the engine's configured batch: its default limit,
``inf_engine_max_batch``, caps only the Serving sheet's SLO batch).  The average
sequence in flight holds P + O/2 tokens in whole blocks (``inf_kv_occupancy_tokens``);
the requests beyond it queue.  ``inf_batch_note`` says so in words.  Speed and cost
follow from that batch B (reference.step_model's terms, on this sheet at the
Inference tp t):

  prefill   = MAX(weights read, GEMMs of B x P tokens at the GEMM rate x T / (T +
              half rows)) + the attention core at attn_eff x P / (P +
              attn_seq_half) + the prompt's all-reduces + n_layers x
              inf_layer_latency_s + inf_step_overhead_s;
  TTFT      = inf_ttft_overhead_s + prefill;
  decode step = MAX(weights touched / (HBM x inf_bw_eff), GEMMs 2 N_active (B +
              m_half) / (t x GEMM rate)) + attention (MAX(KV bytes read at the
              average context / (HBM x inf_kv_eff x c / (c + inf_kv_ctx_half)),
              attention FLOPs / (t x BF16 peak x attn_eff))) + the step's all-reduces
              + n_layers x inf_layer_latency_s + inf_step_overhead_s + B x
              inf_seq_overhead_s;
  latency   = TTFT + (O - 1) x step; output tokens/s = B x O / latency;
  GPU-hours per million output tokens = t x 10^6 / (tokens/s x 3600).

The GEMM rate per GPU is the weight format's peak x e_max x w / (w + gemm_dim_half),
w = h / t (step_model.gemm_rate; the Serving sheet's serve_gemm_peak_flops); the half
rows are inf_gemm_half_ridge x the ridge rows (step_model.gemm_half_rows).  The
"swapped" rows repeat prefill, decode and cost with prompt O and output P.
"""

from __future__ import annotations

import math

from sheetgen.reference.kv_cache import window_layer_share
from sheetgen.reference.request import attended, cache_bytes
from sheetgen.reference.step_model import gemm_half_rows, gemm_rate
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import GIGA, PER_MILLION, SECONDS_PER_HOUR, TERA


def batch_run(
    s: Scenario, kv: dict[str, float], share: float, budget: float
) -> dict[str, float | str]:
    """The batch the engine runs and why, in words."""
    run = s.run
    block = run.kv_block_tokens
    avg = run.prompt_len + run.output_len / 2
    occupancy = math.ceil(avg / block) * block
    seq = cache_bytes(kv, s.model.sliding_window, occupancy) * share
    holds = math.floor(run.inf_kv_mem_fraction * budget / seq) if budget > 0 else 0
    batch = max(1, min(run.inf_batch, holds))
    if run.inf_batch <= holds:
        note = f"runs as asked: batch {run.inf_batch}"
    elif holds < 1:
        note = "does NOT fit: no room for one sequence's cache; shown at batch 1"
    else:
        note = (
            f"asked {run.inf_batch}; the KV cache holds {holds} sequences in flight "
            f"({occupancy} tokens each on average): runs {batch}, the rest queue"
        )
    return {
        "inf_kv_occupancy_tokens": occupancy,
        "inf_kv_run_bytes_per_seq": seq,
        "inf_batch_kv_holds": holds,
        "inf_batch_run": batch,
        "inf_batch_note": note,
    }


def speed(
    s: Scenario,
    tp: int,
    batch: int,
    kv: dict[str, float],
    req: dict[str, float],
    share: float,
    decode_weight_gpu: float,
    act: float,
) -> dict[str, float]:
    """Prefill, decode, latency and cost at ``batch`` sequences on ``tp`` GPUs;
    ``share`` this GPU's share of the KV cache, ``decode_weight_gpu`` the weight bytes a
    step reads per GPU, ``act`` bytes per activation value."""
    m, run, hw = s.model, s.run, s.hardware
    hbm = hw.hbm_tbps * TERA
    prompt, out_len = run.prompt_len, run.output_len
    rate = tp * gemm_rate(s, tp)
    attn_rate = tp * hw.peak_bf16_tflops * TERA * hw.attn_eff
    flops_token = kv["inf_flops_per_token"]
    attn_ctx = req["inf_attn_flops_per_ctx_token"]
    weight_read_s = kv["inf_weight_bytes"] / tp / (hbm * run.inf_bw_eff)
    fixed = m.n_layers * run.inf_layer_latency_s + run.inf_step_overhead_s
    ring = 2 * (tp - 1) / tp
    intra = hw.intra_node_gb_per_s * GIGA

    def allreduce_s(tokens: float) -> float:
        if tp == 1:
            return 0.0
        per = ring * batch * tokens * m.hidden_size * act / intra
        return 2 * m.n_layers * (per + run.inf_collective_latency_s)

    def prefill(p_len: int) -> tuple[float, float, float, float]:
        tokens = batch * p_len
        gemm = tokens * flops_token / (rate * tokens / (tokens + gemm_half_rows(s)))
        core = run.causal_factor * p_len * p_len * attn_ctx * window_layer_share(m, p_len)
        attn = batch * core / (attn_rate * p_len / (p_len + hw.attn_seq_half))
        ar = allreduce_s(p_len)
        return gemm, attn, ar, max(weight_read_s, gemm) + attn + ar + fixed

    def decode(ctx: float) -> tuple[float, float]:
        kv_read = cache_bytes(kv, m.sliding_window, ctx) * share * batch
        read = kv_read * (ctx + run.inf_kv_ctx_half) / (ctx * hbm * run.inf_kv_eff)
        attn = max(read, batch * attended(m, ctx) * attn_ctx / attn_rate)
        return kv_read, attn

    mem_s = decode_weight_gpu / (hbm * run.inf_bw_eff)
    gemm_s = flops_token * (batch + gemm_half_rows(s)) / rate
    ar_step = allreduce_s(1)
    step_fixed = fixed + batch * run.inf_seq_overhead_s
    p_gemm, p_attn, ar_prefill, prefill_s = prefill(prompt)
    core = run.causal_factor * prompt * prompt * attn_ctx * window_layer_share(m, prompt)
    avg_ctx = req["inf_decode_avg_context"]
    kv_read, attn_s = decode(avg_ctx)
    step_s = max(mem_s, gemm_s) + attn_s + ar_step + step_fixed
    ttft = run.inf_ttft_overhead_s + prefill_s
    e2e = ttft + (out_len - 1) * step_s
    out_tps = batch * out_len / e2e
    gpu_hours_mtok = tp * PER_MILLION / (out_tps * SECONDS_PER_HOUR)
    # The same tokens the other way round: prompt = output_len, output = prompt_len.
    _, _, ar_swap_prefill, sw_prefill_s = prefill(out_len)
    sw_prefill_s += run.inf_ttft_overhead_s
    _, sw_attn_s = decode(req["inf_swap_avg_context"])
    sw_step_s = max(mem_s, gemm_s) + sw_attn_s + ar_step + step_fixed
    sw_e2e = sw_prefill_s + (prompt - 1) * sw_step_s
    sw_cost = (
        tp * sw_e2e * run.price_per_gpu_hour * PER_MILLION / (batch * prompt * SECONDS_PER_HOUR)
    )
    return {
        "inf_gemm_flops_per_s": rate,
        "inf_gemm_half_rows": gemm_half_rows(s),
        "inf_fixed_s_per_pass": fixed,
        "inf_prefill_flops": batch * (prompt * flops_token + core),
        "inf_prefill_gemm_s": p_gemm,
        "inf_prefill_attn_s": p_attn,
        "inf_weight_read_s": weight_read_s,
        "inf_prefill_allreduce_s": ar_prefill,
        "inf_swap_prefill_allreduce_s": ar_swap_prefill,
        "inf_prefill_s": prefill_s,
        "inf_ttft_s": ttft,
        "inf_decode_kv_bytes_per_gpu": kv_read,
        "inf_decode_mem_s": mem_s,
        "inf_decode_flops": batch * (flops_token + attended(m, avg_ctx) * attn_ctx),
        "inf_decode_compute_s": gemm_s,
        "inf_decode_attn_s": attn_s,
        "inf_allreduce_s_per_step": ar_step,
        "inf_decode_fixed_s": step_fixed,
        "inf_decode_step_s": step_s,
        "inf_decode_memory_bound": int(mem_s >= flops_token * batch / rate),
        "inf_seq_tokens_per_s": 1 / step_s,
        "inf_decode_tokens_per_s": batch / step_s,
        "inf_e2e_s": e2e,
        "inf_output_tokens_per_s": out_tps,
        "inf_gpu_hours_per_mtok": gpu_hours_mtok,
        "inf_cost_per_mtok": gpu_hours_mtok * run.price_per_gpu_hour,
        "inf_swap_prefill_s": sw_prefill_s,
        "inf_swap_decode_attn_s": sw_attn_s,
        "inf_swap_step_s": sw_step_s,
        "inf_swap_tokens_per_s": batch / sw_step_s,
        "inf_swap_e2e_s": sw_e2e,
        "inf_swap_cost_per_mtok": sw_cost,
    }
