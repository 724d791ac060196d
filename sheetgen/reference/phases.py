"""The Phases sheet: a run split into phases with their own sequence length, batch and MFU.

A scenario has PHASE_SLOTS phase slots; a slot with 0 tokens is unused.  Per
phase, FLOPs per token follow the phase's sequence length exactly: only the
attention core depends on s, and it is linear in s per token, so

    FLOPs/token(s_p) = FLOPs/token(s) - attention(s) + attention(s) x s_p / s,

times, with windowed attention, the window's share of the core at s_p over its
share at s (reference.kv_cache.window_layer_share).

Days = phase FLOPs / (GPUs x peak x phase MFU); wall-clock divides by goodput;
GPU-hours and cost as on the Schedule sheet (cost at the budget's GPU price).
Totals add the phases; they stand beside the single-phase Schedule, which is
left as it is.  The Budget sheet uses the phased totals when any phase is set.
"""

from __future__ import annotations

import math

from sheetgen.reference.clock import clock
from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import inputs
from sheetgen.reference.kv_cache import window_layer_share
from sheetgen.reference.schedule import gpu_price_used
from sheetgen.scenarios.run_fields import PHASE_SLOTS
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import HOURS_PER_DAY, SECONDS_PER_DAY


def phases(s: Scenario) -> dict[str, float]:
    run = s.run
    f = flops(s)
    slots = inputs(s)
    price = gpu_price_used(s)
    mfu_used = clock(s)["mfu_achieved"]
    out: dict[str, float] = {}
    names = ("tokens", "steps", "flops", "days", "days_wall", "gpu_hours", "cost")
    totals = dict.fromkeys(names, 0)
    used = 0
    for i in range(1, PHASE_SLOTS + 1):
        tokens = slots[f"phase_{i}_tokens"]
        seq = slots[f"phase_{i}_seq_len"]
        batch = slots[f"phase_{i}_global_batch_tokens"]
        mfu = slots[f"phase_{i}_mfu"] if run.mfu_source == "typed" else mfu_used
        out[f"phase_{i}_mfu_used"] = mfu
        attn = f["flops_attn_per_token"]
        # Windowed attention: the core's share at the phase's s over the run's.
        share = window_layer_share(s.model, seq)
        out[f"phase_{i}_attn_layer_share"] = share
        # An unused slot (0 tokens) shows 0 FLOPs per token, not a figure at its
        # placeholder sequence length that would disagree with the FLOPs sheet.
        per_token = (
            f["flops_per_token"]
            - attn
            + attn * seq / run.seq_len * share / f["flops_attn_layer_share"]
            if tokens > 0
            else 0
        )
        total_flops = tokens * per_token
        if tokens > 0:
            used += 1
            steps = math.ceil(tokens / batch)
            days = total_flops / (run.n_gpus * f["peak_flops"] * mfu) / SECONDS_PER_DAY
        else:
            steps = 0
            days = 0
        wall = days / run.goodput
        gpu_hours = run.n_gpus * wall * HOURS_PER_DAY
        totals["tokens"] += tokens
        out[f"phase_{i}_tokens_cum"] = totals["tokens"]
        out[f"phase_{i}_flops_per_token"] = per_token
        out[f"phase_{i}_steps"] = steps
        out[f"phase_{i}_flops"] = total_flops
        out[f"phase_{i}_days"] = days
        out[f"phase_{i}_days_wall"] = wall
        out[f"phase_{i}_gpu_hours"] = gpu_hours
        out[f"phase_{i}_cost_usd"] = gpu_hours * price
        totals["steps"] += steps
        totals["flops"] += total_flops
        totals["days"] += days
        totals["days_wall"] += wall
        totals["gpu_hours"] += gpu_hours
        totals["cost"] += gpu_hours * price
    out["phases_used"] = used
    out["phased_tokens"] = totals["tokens"]
    out["phased_steps"] = totals["steps"]
    out["phased_flops"] = totals["flops"]
    out["phased_train_days"] = totals["days"]
    out["phased_days_wall"] = totals["days_wall"]
    out["phased_gpu_hours"] = totals["gpu_hours"]
    out["phased_cost_usd"] = totals["cost"]
    out["phased_mfu_avg"] = (
        totals["flops"] / (totals["days"] * SECONDS_PER_DAY * run.n_gpus * f["peak_flops"])
        if used
        else 0
    )
    return out
