"""The Schedule sheet: steps, days, GPU-hours and cost.

Training time = training FLOPs / (GPUs x peak x MFU) (Narayanan et al. 2021,
section 5.1; Dubey et al. 2024, The Llama 3 Herd of Models, section 3.3); MFU
is the achieved one when a pilot run's throughput is given
(``mfu_achieved``, FLOPs sheet), else the MFU input.  Wall-clock divides by
goodput (share of time spent training).  Accumulation steps = sequences per
step / (micro-batch x dp): global batch = micro-batch x accumulation x
data-parallel replicas (Tazi et al. 2025, The Ultra-Scale
Playbook, 'Gradient accumulation'); with no model parallelism dp = GPUs.
The batch limits dp: at most global batch / (sequence length x micro-batch) replicas
get a micro-batch each (``dp_max_batch``); the batch splits when the accumulation
steps are a whole number >= 1.
The longest training sequence (the sequence length, or a phase's when the phase
has tokens) beyond the model's ``context_limit`` (0 = unknown, not checked) is
context extension (Dubey et al. 2024, section 3.4.2: Llama 3 pretrained at 8K,
then extended to 128K): a Checks warning, since it may be intended.
"""

from __future__ import annotations

import math

from sheetgen.reference.clock import clock
from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import num_text, splits_evenly
from sheetgen.reference.params import params
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import HOURS_PER_DAY, SECONDS_PER_DAY


def schedule(s: Scenario) -> dict[str, float]:
    run = s.run
    f = flops(s)
    p = params(s.model)
    rate = run.n_gpus * f["peak_flops"] * clock(s)["mfu_achieved"]
    seqs = run.global_batch_tokens / run.seq_len
    train_seconds = f["flops_train"] / rate
    train_days = train_seconds / SECONDS_PER_DAY
    wall = train_days / run.goodput
    gpu_hours = run.n_gpus * wall * HOURS_PER_DAY
    accum = seqs / (run.micro_batch * run.dp)
    dp_max = run.global_batch_tokens / (run.seq_len * run.micro_batch)
    return {
        "global_batch_seqs": seqs,
        "grad_accum_steps": accum,
        "dp_max_batch": dp_max,
        "n_gpus_max_batch": max(1, math.floor(dp_max)) * run.tp * run.pp * run.cp,
        "batch_splits": int(splits_evenly(accum)),
        "train_context_note": train_context_note(s),
        "steps": math.ceil(run.train_tokens / run.global_batch_tokens),
        "tokens_per_param": run.train_tokens / p["params_total"],
        "step_seconds": run.global_batch_tokens * f["flops_per_token"] / rate,
        "train_seconds": train_seconds,
        "train_days": train_days,
        "train_days_6nd": f["flops_train_6nd"] / rate / SECONDS_PER_DAY,
        "train_days_wall": wall,
        "gpu_hours": gpu_hours,
        "cost_usd": gpu_hours * run.price_per_gpu_hour,
        "cost_reserved_usd": gpu_hours * run.price_per_gpu_hour_reserved,
        "gpu_price_used": gpu_price_used(s),
    }


def train_context_note(s: Scenario) -> str:
    """The text "OK", or the longest training sequence against the model's context."""
    run, limit = s.run, s.model.context_limit
    longest = max([run.seq_len, *(ph.seq_len for ph in run.phases if ph.tokens > 0)])
    if 0 < limit < longest:
        return (
            f"context extension beyond the model's {num_text(limit)} tokens: "
            f"sequences of {num_text(longest)} tokens"
        )
    return "OK"


def gpu_price_used(s: Scenario) -> float:
    """The GPU-hour price the budget uses: on-demand or reserved, as chosen."""
    run = s.run
    if run.price_basis == "reserved":
        return run.price_per_gpu_hour_reserved
    return run.price_per_gpu_hour
