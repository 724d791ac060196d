"""The Range sheet: the plan's days and cost at the pessimistic and optimistic
MFU and goodput, and the change in total cost when one driver moves.

Wall-clock days = plan FLOPs / (GPUs x peak x MFU x 86,400 x goodput), with
every phase at the range's MFU (the plan's FLOPs are the phased FLOPs when
phases are set).  Cost is recomputed from those GPU-hours: GPU-hours x (GPU
price + billed energy per GPU-hour) x (1 + contingency).  The low cost pairs the
optimistic MFU with the optimistic goodput.

Sensitivity: the plan's total cost recomputed with one driver scaled by
(1 +/- step) — MFU and goodput divide the GPU-hours, tokens multiply them, the
GPU-hour price multiplies only the GPU part — minus the plan's total cost.
"""

from __future__ import annotations

from typing import Any

from sheetgen.reference.budget import WATTS_PER_KW, budget
from sheetgen.reference.clock import clock
from sheetgen.reference.flops import flops
from sheetgen.reference.inputs import inputs
from sheetgen.reference.phases import phases
from sheetgen.reference.schedule import gpu_price_used
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import HOURS_PER_DAY


def budget_range(s: Scenario) -> dict[str, float]:
    run = s.run
    b = budget(s)
    f = flops(s)
    plan_flops = phases(s)["phased_flops"] if b["plan_uses_phases"] else f["flops_train"]
    energy_per_gpu_hour = (
        s.hardware.tdp_w
        * run.pue
        / WATTS_PER_KW
        * run.electricity_price_per_kwh
        * (1 - run.price_includes_power)
    )
    price = gpu_price_used(s)

    # The range is relative to the plan's own days, so it always contains them.
    mfu_used = clock(s)["mfu_achieved"]
    mfu_low = mfu_used * (1 - run.mfu_range)
    mfu_high = min(1.0, mfu_used * (1 + run.mfu_range))
    goodput_low = max(run.goodput - run.goodput_range, run.goodput / 2)
    goodput_high = min(1.0, run.goodput + run.goodput_range)

    def days(mfu_end: float, goodput_end: float) -> float:
        return b["plan_days_wall"] * mfu_used / mfu_end * run.goodput / goodput_end

    def cost(gpu_hours: float) -> float:
        return gpu_hours * (price + energy_per_gpu_hour) * (1 + run.contingency)

    out: dict[str, Any] = {
        "plan_flops": plan_flops,
        "mfu_low": mfu_low,
        "mfu_high": mfu_high,
        "goodput_low": goodput_low,
        "goodput_high": goodput_high,
    }
    out["sens_series_down"] = f"{s.name}: driver lowered by the step"
    out["sens_series_up"] = f"{s.name}: driver raised by the step"
    start = inputs(s)["start_date"]
    for end, mfu, goodput in (
        ("low", mfu_high, goodput_high),
        ("high", mfu_low, goodput_low),
    ):
        d = days(mfu, goodput)
        gpu_hours = run.n_gpus * d * HOURS_PER_DAY
        out[f"train_days_wall_{end}"] = d
        out[f"finish_date_{end}"] = start + d
        out[f"plan_gpu_hours_{end}"] = gpu_hours
        out[f"cost_total_usd_{end}"] = cost(gpu_hours)
    total = b["cost_total_usd"]
    gpu_hours = b["plan_gpu_hours"]
    step = run.sensitivity_step
    for direction, sign in (("down", -1), ("up", 1)):
        scale = 1 + sign * step
        out[f"sens_mfu_{direction}_usd"] = cost(gpu_hours / scale) - total
        out[f"sens_goodput_{direction}_usd"] = cost(gpu_hours / scale) - total
        # Only the GPU part moves; written as the moved part itself, so a free GPU gives 0.
        out[f"sens_price_{direction}_usd"] = sign * step * gpu_hours * price * (1 + run.contingency)
        out[f"sens_tokens_{direction}_usd"] = cost(gpu_hours * scale) - total
    return out
