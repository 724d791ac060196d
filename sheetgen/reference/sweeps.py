"""The Sweeps sheet: the tables behind the charts, one keyed row per sweep point.

Activation memory against sequence length, no recomputation: the stored
activations are linear in s, and naive attention adds the a x s x s softmax
output per layer, quadratic in s (Korthikanti et al. 2022, section 4.1; Tazi et
al. 2025, The Ultra-Scale Playbook, 'Memory for activations').  So at s_k:

    FlashAttention: stored x (s_k / s);   naive: that + scores x (s_k / s)^2

Training days against GPU count: wall-clock days of the single-phase plan on
g_k GPUs at the same MFU (it assumes MFU does not change with scale), with g_k
capped at the most GPUs the global batch keeps busy (Schedule), so the sweep
stops at the batch limit instead of drawing runs that cannot be laid out.
"""

from __future__ import annotations

from sheetgen.reference.clock import clock
from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import KeyValues
from sheetgen.reference.memory import memory
from sheetgen.reference.schedule import schedule
from sheetgen.scenarios.run_fields import SWEEP_POINTS
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import SECONDS_PER_DAY

GB = 10**9


def sweeps(s: Scenario) -> KeyValues:
    run = s.run
    mem = memory(s)
    f = flops(s)
    out: KeyValues = {
        "sweep_series_flash": f"{s.name}: flash",
        "sweep_series_naive": f"{s.name}: naive",
    }
    cap = schedule(s)["n_gpus_max_batch"]
    for k in range(1, SWEEP_POINTS + 1):
        ratio = run.sweep_seq_lens[k - 1] / run.seq_len
        flash = mem["mem_act_stored"] * ratio / GB
        out[f"sweep_act_flash_gb_{k}"] = flash
        out[f"sweep_act_naive_gb_{k}"] = flash + mem["mem_act_naive_scores"] * ratio**2 / GB
    for k in range(1, SWEEP_POINTS + 1):
        out[f"sweep_gpus_used_{k}"] = min(run.sweep_gpus[k - 1], cap)
    for k in range(1, SWEEP_POINTS + 1):
        rate = out[f"sweep_gpus_used_{k}"] * f["peak_flops"] * clock(s)["mfu_achieved"]
        out[f"sweep_days_{k}"] = f["flops_train"] / rate / SECONDS_PER_DAY / run.goodput
    return out
