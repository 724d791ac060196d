"""The one clock: which MFU drives every day and dollar (the FLOPs sheet's "MFU used").

``mfu_source`` chooses it:
  layout    the step-time model's ``mfu_predicted`` (Parallelism sheet; calibrated
            on the published runs in presets/benchmarks/)
  typed     the ``mfu`` input
  measured  a pilot run's tokens/s per GPU (or its step time with this scenario's
            GPUs and batch): MFU = tokens/s x FLOPs per token / peak; 0 when
            nothing is measured, which the Checks sheet flags as an error.
Throughput, HFU, the Schedule, Phases, Budget, Range, Months and Sweeps all read
this one value.  A typed MFU more than ``MFU_TYPED_TOLERANCE`` away from the
predicted one is a warning (Checks) naming both.
"""

from __future__ import annotations

from functools import lru_cache

from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import KeyValues, num_text
from sheetgen.reference.parallelism import predicted
from sheetgen.scenarios.scenario import Scenario

# A typed MFU further than this (relative) from the predicted one is a warning:
# about twice the calibration's worst error on the published runs (DESIGN.md).
MFU_TYPED_TOLERANCE = 0.15


def clock(s: Scenario) -> KeyValues:
    """The clock's keys (a fresh dict); Schedule, Phases, Range, Sweeps and Checks all
    read them, so each distinct scenario's layout is evaluated once."""
    return dict(_clock(s))


@lru_cache(maxsize=1024)
def _clock(s: Scenario) -> KeyValues:
    run = s.run
    f = flops(s)
    pred = predicted(s)["mfu_predicted"]
    measured = run.measured_tokens_per_s_per_gpu
    if measured <= 0 and run.measured_step_seconds > 0:
        measured = run.global_batch_tokens / (run.measured_step_seconds * run.n_gpus)
    peak, per_token = f["peak_flops"], f["flops_per_token"]
    if run.mfu_source == "layout":
        mfu = pred
    elif run.mfu_source == "measured":
        mfu = measured * per_token / peak if measured > 0 else pred  # Checks: an error
    else:
        mfu = run.mfu
    tps = mfu * peak / per_token
    gap = run.mfu / pred - 1
    typed_off = run.mfu_source == "typed" and abs(gap) > MFU_TYPED_TOLERANCE
    words = {
        "layout": "MFU predicted from the layout",
        "typed": "MFU as typed",
        "measured": "MFU measured in a pilot run",
    }[run.mfu_source]
    return {
        "tokens_per_s_measured": measured,
        "mfu_achieved": mfu,
        "mfu_clock_text": f"{words}: {num_text(mfu * 100, 1)}%",
        "mfu_typed_gap": gap,
        "mfu_typed_note": (
            f"typed MFU {num_text(run.mfu * 100, 1)}% vs {num_text(pred * 100, 1)}% "
            "predicted from the layout"
            if typed_off
            else "OK"
        ),
        "mfu_achieved_6n": mfu * f["flops_6n_per_token"] / per_token,
        "tokens_per_s_per_gpu": tps,
        "tokens_per_s_per_gpu_6n": mfu * peak / f["flops_6n_per_token"],
        "tokens_per_s_total": tps * run.n_gpus,
        "hfu": mfu * f["flops_hw_per_token"] / per_token,
    }
