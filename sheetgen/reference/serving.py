"""The Serving sheet: replicas, GPUs and money for a traffic target (issue 23).

Continuous batching (Orca, Yu et al. 2022, OSDI, section 4: iteration-level
scheduling; vLLM, Kwon et al. 2023, SOSP, arXiv:2309.06180) keeps B sequences
in flight on a replica of t tensor-parallel GPUs: every iteration decodes one
token of each, and a finished sequence's slot is taken by a new request, whose
prompt is prefilled in its own iteration.  The step model (reference.step_model,
issue 39) is piecewise linear in B, so the largest batch meeting the SLOs is a closed
form (no search):

  decode step   step(B) = max(W, G0 + B g) + B p + F
                W: all served weights / (t x HBM x inf_bw_eff) (at serving batches
                every expert of a MoE model is touched); G0 + B g: the GEMMs at B
                rows (g = 2 N_active / (t x GEMM rate), G0 = half rows x g); p = the
                paged-attention time of one sequence at its average context + its
                all-reduce bytes + host time; F = n_layers x inf_layer_latency_s +
                2 n_layers x inf_collective_latency_s (t > 1) + inf_step_overhead_s.
  prefill       pre = one prompt's prefill (step_model.prefill); stall = the GPU
                time it adds when prefilled beside others (full-width GEMMs,
                attention core, all-reduce bytes).
  TPOT(B)       = step(B) + B stall / O: to keep B slots full, B / O requests
                join per step on average;
  TTFT(B)       = inf_ttft_overhead_s + pre + step(B): the step in flight, then the
                prompt (queueing at the peak rate is not modelled: replicas are sized
                for the peak).
  B_tpot        = floor(min((S - W - F) / (p + stall/O),
                            (S - G0 - F) / (g + p + stall/O)))
  B_ttft        = floor(min((T' - W - F) / p, (T' - G0 - F) / (g + p))),
                T' = TTFT SLO - overhead - pre
                (max(x, y) + z <= S exactly when both x + z and y + z are);
  B_kv          = floor(inf_kv_mem_fraction x (memory - overhead - weights / t) /
                (the cache of the average sequence in flight: P + O/2 tokens in
                whole blocks, windowed layers capped at the window, x this GPU's
                share)), the paged cache (vLLM);
  SLO batch     = min(B_tpot, B_ttft, B_kv, inf_engine_max_batch), "none" below 1
                with the verdict naming the binding limit;
  requests/s per replica = B / (O x TPOT(B)); replicas = ceil(rate / that) at
                peak and at the average rate; GPUs = replicas x t;
  monthly cost  = average replicas x t x hours per month x price; its range: the
                same with requests/s per replica x (1 +- serve_calibration_error);
  in flight     = rate x (TTFT + (O - 1) x TPOT) (Little's law).

The serving TP, when not given: the smallest t = 1, 2, 4, ... up to the node
(``gpus_per_node``; ``SERVE_TP_SLOTS`` sizes tried) that splits the heads (t divides
the query heads, and divides the KV heads or is a multiple of them: vLLM's rule,
params.tp_splits_heads) and whose weights, overhead and the KV cache of its SLO batch
(at least one request) fit one GPU; when none does, the largest t within the node
that splits the heads, where the KV memory then caps the batch.
"""

from __future__ import annotations

import math
from functools import lru_cache

from sheetgen.reference.inputs import num_text
from sheetgen.reference.kv_cache import kv_cache
from sheetgen.reference.memory import memory
from sheetgen.reference.request import (
    TP_CANDIDATES,
    cache_bytes,
    kv_gpu_share,
    possible_tps,
    request,
    smallest_fitting_tp,
)
from sheetgen.reference.schedule import gpu_price_used
from sheetgen.reference.step_model import (
    Prefill,
    Step,
    attn_seq_s,
    decode_step,
    gemm_peak,
    prefill,
)
from sheetgen.scenarios.run_fields import SERVE_TP_SLOTS
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import GIGA, SECONDS_PER_HOUR

REQUESTS_PER_QUOTE = 1000  # cost is quoted per thousand requests


def _shared(s: Scenario) -> dict[str, float]:
    """The quantities every tp candidate shares (computed once per scenario)."""
    run = s.run
    kv = kv_cache(s)
    inf = request(s)
    avg = inf["inf_decode_avg_context"]
    block = run.kv_block_tokens
    occupancy = math.ceil(avg / block) * block
    return {
        "attended": inf["inf_decode_attended_tokens"],
        "prefill_attn_share": inf["inf_prefill_attn_share"],
        "attn": inf["inf_attn_flops_per_ctx_token"],
        "flops_token": kv["inf_flops_per_token"],
        "weights": kv["inf_weight_bytes"],
        "avg_ctx": avg,
        "kv_read_seq": cache_bytes(kv, s.model.sliding_window, avg),
        "kv_seq": inf["inf_kv_bytes_per_seq"],
        "occupancy": occupancy,
        "kv_seq_avg": cache_bytes(kv, s.model.sliding_window, occupancy),
        "request_tokens": inf["inf_request_tokens"],
        "act": memory(s)["act_bytes"],
    }


def gemm_peak_flops(s: Scenario) -> float:
    """Large-GEMM FLOP/s per GPU for the served weight format (step_model.gemm_peak)."""
    peak, eff = gemm_peak(s.hardware, s.run.weight_dtype)
    return peak * eff


def replica_step(s: Scenario, t: int, c: dict[str, float]) -> tuple[Step, float]:
    """The decode step model of a t-GPU replica (reference.step_model) and this GPU's KV
    share."""
    m = s.model
    share = kv_gpu_share(m.n_kv_heads, t, m.is_mla)
    attn = attn_seq_s(s, t, c["kv_read_seq"] * share, c["attended"], c["attn"], c["avg_ctx"])
    return decode_step(s, t, c["weights"], c["flops_token"], attn, c["act"]), share


def prompt_prefill(s: Scenario, t: int, c: dict[str, float], rows: float = 0) -> Prefill:
    """One prompt's prefill on a t-GPU replica; ``rows`` > 0 sets the GEMMs' row count
    (prompts prefilled together), else the prompt's own tokens."""
    run = s.run
    prompt = run.prompt_len
    core = run.causal_factor * prompt * prompt * c["attn"] * c["prefill_attn_share"]
    return prefill(s, t, 1, prompt, c["flops_token"], core, c["weights"], c["act"], rows)


def replica(s: Scenario, t: int, c: dict[str, float] | None = None) -> dict[str, float]:
    """The step model and the SLO batch bounds of a t-GPU replica."""
    run, hw = s.run, s.hardware
    c = c or _shared(s)
    st, share = replica_step(s, t, c)
    pre = prompt_prefill(s, t, c)
    # Prompts joining a running batch are prefilled together: full-width GEMMs.
    wide = prompt_prefill(s, t, c, rows=s.model.hidden_size)
    stall = wide.gemm_s + wide.attn_s + wide.ar_s
    out_len = run.output_len
    per_seq = st.per_seq_s + stall / out_len
    slo_t = run.slo_tpot_s
    slo_p = run.slo_ttft_s - run.inf_ttft_overhead_s - pre.time
    b_tpot = math.floor(
        min(
            (slo_t - st.weight_s - st.fixed_s) / per_seq,
            (slo_t - st.gemm_fixed_s - st.fixed_s) / (st.gemm_seq_s + per_seq),
        )
    )
    b_ttft = math.floor(
        min(
            (slo_p - st.weight_s - st.fixed_s) / st.per_seq_s,
            (slo_p - st.gemm_fixed_s - st.fixed_s) / (st.gemm_seq_s + st.per_seq_s),
        )
    )
    seq_bytes = c["kv_seq_avg"] * share
    room = run.inf_kv_mem_fraction * (hw.mem_gb * GIGA - run.inf_overhead_bytes - c["weights"] / t)
    return {
        "share": share,
        "weight_s": st.weight_s,
        "kv_s": st.attn_seq_s,
        "comp_s": st.gemm_seq_s,
        "gemm_fixed": st.gemm_fixed_s,
        "ar_fixed": st.ar_fixed_s,
        "ar_seq": st.ar_seq_s,
        "fixed": st.fixed_s,
        "per_seq": st.per_seq_s,
        "prefill_s": pre.time,
        "stall_s": stall,
        "weight_bytes_gpu": c["weights"] / t,
        "seq_bytes": seq_bytes,
        "room": room,
        "b_tpot": max(0, b_tpot),
        "b_ttft": max(0, b_ttft),
        "b_kv": max(0, math.floor(room / seq_bytes)),
    }


def step_s(r: dict[str, float], batch: float) -> float:
    """Decode step time of the replica at ``batch`` sequences (the step model)."""
    gemm = r["gemm_fixed"] + batch * r["comp_s"]
    return max(r["weight_s"], gemm) + batch * r["per_seq"] + r["fixed"]


def static_batch(s: Scenario, t: int, batch: int) -> dict[str, float]:
    """A batch of ``batch`` requests started together on a t-GPU replica (what a latency
    benchmark runs): time to first token (the batch's prompts prefilled in one pass),
    the decode step at the average context, end-to-end latency and output tokens/s."""
    run = s.run
    c = _shared(s)
    st, _ = replica_step(s, t, c)
    prompt = run.prompt_len
    core = run.causal_factor * prompt * prompt * c["attn"] * c["prefill_attn_share"]
    pre = prefill(s, t, batch, prompt, c["flops_token"], core, c["weights"], c["act"])
    ttft = run.inf_ttft_overhead_s + pre.time
    step = st.time(batch)
    e2e = ttft + (run.output_len - 1) * step
    return {"ttft": ttft, "step": step, "e2e": e2e, "out_tps": batch * run.output_len / e2e}


def choose_tp(s: Scenario, c: dict[str, float]) -> tuple[int, dict[str, float | str]]:
    """The serving TP (given, or chosen among 1, 2, 4, ... that split the heads) and the
    candidates' keys."""
    out: dict[str, float | str] = {}
    node = s.run.gpus_per_node
    fits = []
    possible = possible_tps(s.model)
    for n, t in enumerate(TP_CANDIDATES, start=1):
        r = replica(s, t, c)
        batch = max(1, min(r["b_tpot"], r["b_ttft"]))
        fits.append(int(possible[n - 1] and t <= node and r["room"] >= batch * r["seq_bytes"]))
        out[f"serve_cand_tp_{n}"] = t
        out[f"serve_cand_possible_{n}"] = possible[n - 1]
        for name in ("share", "weight_s", "kv_s", "comp_s", "ar_fixed", "ar_seq", "prefill_s"):
            out[f"serve_cand_{name}_{n}"] = r[name]
        out[f"serve_cand_fixed_s_{n}"] = r["fixed"]
        out[f"serve_cand_stall_s_{n}"] = r["stall_s"]
        out[f"serve_cand_batch_{n}"] = min(r["b_tpot"], r["b_ttft"])
        out[f"serve_cand_fits_{n}"] = fits[-1]
    chosen, picked = smallest_fitting_tp("serve_cand", fits, possible, node)
    out.update(picked)
    return (s.run.serve_tp if s.run.serve_tp > 0 else chosen), out


def _verdict(
    s: Scenario, r: dict[str, float], t: int, c: dict[str, float], step1: float, ok: str
) -> str:
    """The serving verdict: the first limit that makes the plan impossible, else ``ok``."""
    run = s.run
    rate = run.serve_requests_per_s
    if rate <= 0:
        return "no serving plan: 0 requests/s at peak on Inputs"
    elif r["b_kv"] < 1:
        return (
            f"KV memory: at tp {t} the weights ({num_text(r['weight_bytes_gpu'] / GIGA, 1)} GB "
            f"per GPU) and overhead leave no room for one {c['request_tokens']}-token "
            f"request in {num_text(s.hardware.mem_gb, 1)} GB"
        )
    elif r["b_ttft"] < 1:
        return (
            f"TTFT {num_text(run.slo_ttft_s, 3)} s impossible: one {run.prompt_len}-token prompt "
            f"prefills in {num_text(r['prefill_s'], 3)} s + one decode step "
            f"{num_text(step1, 3)} s at tp {t}"
        )
    elif r["b_tpot"] < 1:
        return (
            f"TPOT {num_text(run.slo_tpot_s, 3)} s impossible: at batch 1 a decode step takes "
            f"{num_text(step1, 4)} s (weights read {num_text(r['weight_s'], 4)} s) + "
            f"{num_text(r['stall_s'] / run.output_len, 4)} s of prefill per token at tp {t}"
        )
    return ok


def serving(s: Scenario) -> dict[str, float | str]:
    """Every Serving-sheet key of one scenario (a fresh dict)."""
    return dict(_serving(s))


@lru_cache(maxsize=256)
def _serving(s: Scenario) -> dict[str, float | str]:
    run = s.run
    c = _shared(s)
    t, out = choose_tp(s, c)
    r = replica(s, t, c)
    if run.serve_tp > 0:
        note = f"given on Inputs: tp {t}"
    elif out[f"serve_cand_first_{SERVE_TP_SLOTS}"]:
        note = (
            f"chosen: tp {t}, the smallest power of two up to the node "
            f"({run.gpus_per_node}) that splits the heads and holds the weights and one "
            "SLO batch's KV cache"
        )
    else:
        note = (
            f"chosen: tp {t}, the largest power of two in the node ({run.gpus_per_node}) "
            "that splits the heads; none that does holds the weights and one SLO batch's "
            "KV cache, memory caps the batch"
        )
    engine = run.inf_engine_max_batch
    bounds = (r["b_tpot"], r["b_ttft"], r["b_kv"], engine)
    best = min(bounds)
    used = max(1, best)
    ok = int(best >= 1)
    if r["b_kv"] <= min(r["b_tpot"], r["b_ttft"], engine):
        binding = "KV memory"
    elif engine < min(r["b_tpot"], r["b_ttft"]):
        binding = "engine batch limit"
    elif r["b_tpot"] <= r["b_ttft"]:
        binding = "TPOT"
    else:
        binding = "TTFT"
    step1 = step_s(r, 1)
    step = step_s(r, used)
    tpot = step + used * r["stall_s"] / run.output_len
    ttft = run.inf_ttft_overhead_s + r["prefill_s"] + step
    rps = used / (run.output_len * tpot)
    rate, avg_rate = run.serve_requests_per_s, run.serve_requests_per_s * run.serve_avg_to_peak
    replicas_peak = math.ceil(rate / rps)
    replicas_avg = math.ceil(avg_rate / rps)
    price = run.serve_price_per_gpu_hour if run.serve_price_per_gpu_hour > 0 else gpu_price_used(s)
    cost_month = replicas_avg * t * run.serve_hours_per_month * price
    cost_1k = (
        cost_month * REQUESTS_PER_QUOTE / (avg_rate * SECONDS_PER_HOUR * run.serve_hours_per_month)
        if rate > 0
        else 0.0
    )

    concurrency = rate * (ttft + (run.output_len - 1) * tpot)
    err = run.serve_calibration_error
    low = math.ceil(avg_rate / (rps * (1 + err)))
    high = math.ceil(avg_rate / (rps * (1 - err)))
    hours = run.serve_hours_per_month
    low_cost, high_cost = low * t * hours * price, high * t * hours * price
    error_text = (
        f"throughput within ±{num_text(err * 100, 0)}% on 9 in 10 published runs: {low} to "
        f"{high} replicas on average, USD {num_text(low_cost, 0)} to "
        f"{num_text(high_cost, 0)} a month"
    )
    verdict = _verdict(s, r, t, c, step1, f"OK: batch {used} per replica, bound by {binding}")
    plan_ok = ok and rate > 0
    if plan_ok:
        summary = (
            f"{num_text(rate, 2)} req/s peak: {replicas_peak} replicas x {t} GPUs = "
            f"{replicas_peak * t} GPUs, {replicas_avg * t} on average, "
            f"USD {num_text(cost_month, 0)} a month (USD {num_text(low_cost, 0)} to "
            f"{num_text(high_cost, 0)} at ±{num_text(err * 100, 0)}% throughput)"
        )
    else:
        summary = verdict

    def none_unless(x: float) -> float | str:
        return x if ok else "none"

    return {
        **out,
        "serve_tp_used": t,
        "serve_tp_note": note,
        "serve_kv_share": r["share"],
        "serve_kv_read_bytes_per_seq": c["kv_read_seq"],
        "serve_weight_read_s": r["weight_s"],
        "serve_kv_read_s_per_seq": r["kv_s"],
        "serve_compute_s_per_seq": r["comp_s"],
        "serve_allreduce_fixed_s": r["ar_fixed"],
        "serve_gemm_peak_flops": gemm_peak_flops(s),
        "serve_gemm_fixed_s": r["gemm_fixed"],
        "serve_fixed_s": r["fixed"],
        "serve_per_seq_s": r["per_seq"],
        "serve_prefill_stall_s": r["stall_s"],
        "serve_kv_occupancy_tokens": c["occupancy"],
        "serve_allreduce_s_per_seq": r["ar_seq"],
        "serve_prefill_s": r["prefill_s"],
        "serve_step1_s": step1,
        "serve_kv_room_per_gpu": r["room"],
        "serve_kv_bytes_per_seq_gpu": r["seq_bytes"],
        "serve_batch_tpot": r["b_tpot"],
        "serve_batch_ttft": r["b_ttft"],
        "serve_batch_kv": r["b_kv"],
        "serve_slo_ok": ok,
        "serve_binding": binding,
        "serve_batch_max_slo": none_unless(best),
        "serve_batch_used": used,
        "serve_step_s": step,
        "serve_tpot_s": tpot,
        "serve_ttft_s": ttft,
        "serve_req_per_s_per_replica": rps,
        "serve_tokens_per_s_per_replica": rps * run.output_len,
        "serve_replicas_peak": none_unless(replicas_peak),
        "serve_replicas_avg": none_unless(replicas_avg),
        "serve_gpus_peak": none_unless(replicas_peak * t),
        "serve_gpus_avg": none_unless(replicas_avg * t),
        "serve_price_used": price,
        "serve_cost_month_usd": none_unless(cost_month),
        "serve_cost_per_1k_requests": cost_1k if plan_ok else "none",
        "serve_concurrency_peak": concurrency,
        "serve_concurrency_per_replica": none_unless(
            concurrency / replicas_peak if replicas_peak > 0 else 0.0
        ),
        "serve_replicas_avg_low": none_unless(low),
        "serve_replicas_avg_high": none_unless(high),
        "serve_cost_month_low_usd": none_unless(low_cost),
        "serve_cost_month_high_usd": none_unless(high_cost),
        "serve_error_text": error_text if ok else "none",
        "serve_verdict": verdict,
        "serve_summary_text": summary,
    }
