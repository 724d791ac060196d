"""The Inference sheet: will a request fit, how fast is it served, what does it cost.

One replica of the model is served by ``inf_tp`` GPUs (tensor parallel; 0 = the
smallest power of two up to the node that splits the heads (it divides the query heads,
and divides the KV heads or is a multiple of them: vLLM's rule, params.tp_splits_heads)
and on which the batch fits, at its decode and its prefill peak, else the largest such
power of two in the node: ``inf_tp_used``) holding
``inf_batch`` sequences, each a request of ``prompt_len`` prompt tokens and
``output_len`` generated tokens (Kwon et al. 2023, vLLM, figure 1: inference
memory = weights + KV cache
+ buffers; prefill is compute-bound, decode bandwidth-bound).

Memory per GPU = weights / tp + the GPU's share of the KV cache + runtime
overhead.  The KV cache is sized for the whole request, prompt + output tokens:
the worst case, at the end of decoding.  Each GPU holds ceil(n_kv / tp) of the
n_kv key/value heads, so the share is ceil(n_kv / tp) / n_kv (1/tp when tp
divides n_kv; heads are replicated when tp > n_kv); an MLA latent is not split
by head, so every GPU holds all of it.

Speed and cost (reference.inference_speed, issue 39): the batch that runs,
``inf_batch_run``, is ``inf_batch`` capped by what the engine's paged KV cache holds at
the average occupancy of a sequence in flight and by the engine's batch limit; prefill,
the decode step (reference.step_model's terms), latency and cost follow from it.  MoE:
E (1 - (1 - k/E)^B) routed experts per layer are expected to be touched per step
(uniform routing) at that batch.

Framework additions (issue 12):
  paged KV cache: each sequence's cache is allocated in blocks of
      ``kv_block_tokens`` tokens (vLLM: 16), so a request holds
      ceil(tokens / block) x block tokens of cache;
  prefill peak per GPU = weights / tp + overhead + batch x (the prompt's KV cache
      + one layer's activations for the prompt (the values a layer keeps, as the
      Memory sheet counts them; tensor-parallel ones / tp) + the logits of the
      prompt's last position, the one serving engines sample from (logits_bytes x
      V / tp)); the batch is prefilled together (no chunked prefill).  Both the
      decode and the prefill peak must fit: the largest batch and context are the
      smaller of the two answers (``inf_max_batch_kv`` keeps the cache-only count);
  tensor-parallel all-reduces: 2 per layer, each of batch x tokens x h values
      (act bytes), ring 2(tp-1)/tp at the intra-node link, plus a fixed latency
      per collective; 0 at tp = 1 (reference.inference_speed).

Windowed attention (issue 23): a cache of c tokens holds global bytes per token x c
+ local bytes per token x min(c, window) (the KV cache sheet), in every place the
cache is sized or read: the request's and the prompt's cache (in whole blocks), the
decode read at the average context, and the longest context (solved piecewise: below
the window both parts grow, past it only the global layers; when every layer is
windowed the cache stops growing and the prefill's limit is the answer).  A decode
query attends to the average context in global layers and to min(context, window)
in windowed ones; prefill's attention core is scaled by the window's share of a
causal layer's pairs (reference.kv_cache.window_layer_share at the prompt length).
The MHA comparison keeps the same window: the cache x kv_mha_ratio.

The "swapped" rows repeat the speed and cost for the same tokens the other way
round (prompt O, output P): the illustrative 4,000 + 100 versus 100 + 4,000.
"""

from __future__ import annotations

import math

from sheetgen.reference.inference_speed import batch_run, speed
from sheetgen.reference.kv_cache import kv_cache
from sheetgen.reference.memory import memory
from sheetgen.reference.params import params
from sheetgen.reference.request import (
    TP_CANDIDATES,
    kv_gpu_share,
    possible_tps,
    request,
    smallest_fitting_tp,
)
from sheetgen.scenarios.scenario import Model, Scenario
from sheetgen.units import GIGA


def _prefill_act_token(m: Model, mem: dict[str, float], tp: int) -> float:
    """One layer's activations per prompt token per GPU: the norm inputs (and MLA's
    latents) whole, the tensor-parallel values / tp (the Memory sheet's count)."""
    unsplit = 4 * m.hidden_size + (m.q_lora_rank + m.kv_lora_rank if m.is_mla else 0)
    values = max(mem["act_values_dense_layer"], mem["act_values_moe_layer"])
    return mem["act_bytes"] * (unsplit + (values - unsplit) / tp)


def choose_tp(
    s: Scenario, req: dict[str, float], mem: dict[str, float], weights: float
) -> tuple[int, dict[str, float | str]]:
    """GPUs per replica: ``inf_tp`` when > 0, else the smallest power of two up to the
    node that splits the heads and whose GPUs hold the weights, the overhead and the
    batch at both its decode and its prefill peak; else the largest power of two in the
    node that splits the heads. With the candidates' keys (1, 2, 4, ... as on the
    Serving sheet). ``req`` is request(s), ``mem`` memory(s), ``weights`` the served
    weights' bytes."""
    m, run = s.model, s.run
    cap = s.hardware.mem_gb * GIGA
    out: dict[str, float | str] = {}
    fits = []
    possible = possible_tps(m)
    for n, t in enumerate(TP_CANDIDATES, start=1):
        share = kv_gpu_share(m.n_kv_heads, t, m.is_mla)
        decode_seq = req["inf_kv_bytes_per_seq"] * share
        prefill_seq = (
            req["inf_prompt_kv_bytes"] * share
            + _prefill_act_token(m, mem, t) * run.prompt_len
            + run.logits_bytes * m.vocab_size / t
        )
        need = weights / t + run.inf_overhead_bytes + run.inf_batch * max(decode_seq, prefill_seq)
        fits.append(int(possible[n - 1] and t <= run.gpus_per_node and need <= cap))
        out |= {f"inf_cand_tp_{n}": t, f"inf_cand_possible_{n}": possible[n - 1]}
        out |= {f"inf_cand_share_{n}": share, f"inf_cand_need_{n}": need}
        out[f"inf_cand_fits_{n}"] = fits[-1]
    node = run.gpus_per_node
    chosen, picked = smallest_fitting_tp("inf_cand", fits, possible, node)
    out.update(picked)
    if run.inf_tp > 0:
        return run.inf_tp, {"inf_tp_note": f"given on Inputs: tp {run.inf_tp}", **out}
    if any(fits):
        why = (
            f"the smallest power of two up to the node ({node}) that splits the heads "
            "and on which the batch fits"
        )
    else:
        why = (
            f"the largest power of two in the node ({node}) that splits the heads; "
            "the batch fits on none that does"
        )
    return chosen, {"inf_tp_note": f"chosen: tp {chosen}, {why}", **out}


def _floor_fit(budget: float, per_unit: float) -> int:
    """Whole units of per_unit bytes that fit in budget bytes; 0 when nothing is left."""
    if budget <= 0:
        return 0
    return math.floor(budget / per_unit)


def _tokens_in(room: float, grow: float, windowed: float, window: int, cap: float = 0.0) -> float:
    """The most tokens c with grow x c + windowed x min(c, window) <= room: within
    the window both parts grow, past it only ``grow``; when nothing grows past the
    window (every layer windowed) the cache stops there and ``cap`` is the answer."""
    if room <= (grow + windowed) * window:
        return room / (grow + windowed)
    if grow > 0:
        return window + (room - (grow + windowed) * window) / grow
    return cap


def inference(s: Scenario) -> dict[str, float | str]:
    m, run, hw = s.model, s.run, s.hardware
    p = params(m)
    kv = kv_cache(s)
    gpu_mem = hw.mem_gb * GIGA
    # The request (reference.request) and memory per GPU.
    req = request(s)
    mem = memory(s)
    tp, candidates = choose_tp(s, req, mem, kv["inf_weight_bytes"])
    batch = run.inf_batch
    prompt = run.prompt_len
    share = kv_gpu_share(m.n_kv_heads, tp, m.is_mla)
    share_mha = kv_gpu_share(m.n_heads, tp, False)
    # Windowed attention: global layers cache every token, local ones the last W.
    kv_g, kv_l = kv["kv_bytes_per_token_global"], kv["kv_bytes_per_token_local"]
    window = m.sliding_window
    block = run.kv_block_tokens
    seq_kv_bytes = req["inf_kv_bytes_per_seq"]
    prompt_kv_bytes = req["inf_prompt_kv_bytes"]
    kv_bytes = seq_kv_bytes * batch
    kv_bytes_mha = kv_bytes * kv["kv_mha_ratio"]
    weights = kv["inf_weight_bytes"]
    weights_gpu = weights / tp
    kv_gpu = kv_bytes * share
    total_gpu = weights_gpu + kv_gpu + run.inf_overhead_bytes
    budget = gpu_mem - run.inf_overhead_bytes - weights_gpu

    # Prefill peak: the prompt's cache, one layer's activations and the logits.
    prefill_act_token = _prefill_act_token(m, mem, tp)
    prefill_act = prefill_act_token * prompt
    prefill_logits = run.logits_bytes * m.vocab_size / tp
    prefill_seq = prompt_kv_bytes * share + prefill_act + prefill_logits
    prefill_peak = weights_gpu + run.inf_overhead_bytes + batch * prefill_seq
    decode_seq = seq_kv_bytes * share
    max_batch_kv = _floor_fit(budget, decode_seq)
    max_batch = _floor_fit(budget, max(decode_seq, prefill_seq))
    room = budget / batch - prefill_logits
    grow, windowed = kv_g * share + prefill_act_token, kv_l * share
    ctx_prefill = math.floor(_tokens_in(room, grow, windowed, window)) if room > 0 else 0
    if budget > 0:
        ctx_kv = math.floor(
            _tokens_in(budget / (share * batch), kv_g, kv_l, window, cap=ctx_prefill)
        )
    else:
        ctx_kv = 0
    max_context = min(ctx_kv, ctx_prefill) // block * block
    max_batch_mha = _floor_fit(budget, seq_kv_bytes * kv["kv_mha_ratio"] * share_mha)

    # The batch that runs (capped by the KV cache at the average occupancy) and its speed.
    run_keys = batch_run(s, kv, share, budget)
    running = int(run_keys["inf_batch_run"])
    if m.is_moe:
        touched = m.n_experts * (1 - (1 - m.experts_per_token / m.n_experts) ** running)
    else:
        touched = 0.0
    params_read = p["params_total"] - p["n_moe_layers"] * p["params_expert"] * (
        m.n_experts - touched
    )
    decode_weight_gpu = params_read * kv["inf_weight_bytes_per_param"] / tp
    fast = speed(s, tp, running, kv, req, share, decode_weight_gpu, mem["act_bytes"])

    return {
        **req,
        "inf_tp_used": tp,
        **candidates,
        "inf_prefill_act_bytes_per_token": prefill_act_token,
        "inf_prefill_act_bytes_per_seq": prefill_act,
        "inf_prefill_logits_bytes_per_seq": prefill_logits,
        "inf_prefill_bytes_per_seq": prefill_seq,
        "inf_prefill_peak_bytes_per_gpu": prefill_peak,
        "inf_decode_bytes_per_seq": decode_seq,
        "inf_max_batch_kv": max_batch_kv,
        "inf_max_context_kv": ctx_kv,
        "inf_max_context_prefill": ctx_prefill,
        "inf_kv_bytes": kv_bytes,
        "inf_kv_bytes_mha": kv_bytes_mha,
        "inf_kv_gpu_share": share,
        "inf_weight_bytes_per_gpu": weights_gpu,
        "inf_kv_bytes_per_gpu": kv_gpu,
        "inf_total_bytes_per_gpu": total_gpu,
        "inf_mem_share": total_gpu / gpu_mem,
        "inf_fits": int(total_gpu <= gpu_mem and prefill_peak <= gpu_mem),
        "inf_kv_budget_per_gpu": budget,
        "inf_max_batch": max_batch,
        "inf_max_context": max_context,
        "inf_max_batch_mha": max_batch_mha,
        "inf_experts_touched": touched,
        "inf_decode_params_read": params_read,
        "inf_decode_weight_bytes_per_gpu": decode_weight_gpu,
        **run_keys,
        **fast,
    }
