"""The Budget sheet: GPU cost at on-demand and reserved prices, energy, contingency, calendar.

The plan is the phased schedule when any phase is set, else the single-phase
Schedule.  Energy counts GPU board power only: TDP x GPU-hours x PUE / 1000
(kWh); CPUs, network and storage are not included, and an accelerator whose
TDP is unknown (0) gives 0 energy and a Checks warning.  Energy is billed on
top of the GPU price only when ``price_includes_power`` is 0 (owned or
colocated GPUs); on-demand cloud prices include power, so by default (1) the
kWh are shown but cost nothing extra.

    total = (GPU cost at the chosen price + energy cost) x (1 + contingency)

Dates are spreadsheet serial numbers (Excel 1900 date system): finish = start
+ wall-clock days of the plan.
"""

from __future__ import annotations

from sheetgen.reference.inputs import inputs
from sheetgen.reference.phases import phases
from sheetgen.reference.schedule import gpu_price_used, schedule
from sheetgen.scenarios.scenario import Scenario

WATTS_PER_KW = 1000


def budget(s: Scenario) -> dict[str, float]:
    run = s.run
    sched = schedule(s)
    ph = phases(s)
    uses_phases = int(ph["phases_used"] > 0)
    tokens = ph["phased_tokens"] if uses_phases else run.train_tokens
    days_wall = ph["phased_days_wall"] if uses_phases else sched["train_days_wall"]
    gpu_hours = ph["phased_gpu_hours"] if uses_phases else sched["gpu_hours"]
    gpu_cost = gpu_hours * gpu_price_used(s)
    energy_kwh = s.hardware.tdp_w * gpu_hours * run.pue / WATTS_PER_KW
    energy_cost = energy_kwh * run.electricity_price_per_kwh * (1 - run.price_includes_power)
    subtotal = gpu_cost + energy_cost
    contingency = subtotal * run.contingency
    total = subtotal + contingency
    return {
        "plan_uses_phases": uses_phases,
        "plan_tokens": tokens,
        "plan_days_wall": days_wall,
        "plan_gpu_hours": gpu_hours,
        "gpu_cost_on_demand_usd": gpu_hours * run.price_per_gpu_hour,
        "gpu_cost_reserved_usd": gpu_hours * run.price_per_gpu_hour_reserved,
        "gpu_cost_usd": gpu_cost,
        "energy_kwh": energy_kwh,
        "energy_cost_usd": energy_cost,
        "cost_subtotal_usd": subtotal,
        "cost_contingency_usd": contingency,
        "cost_total_usd": total,
        "cost_total_per_m_tokens": total / tokens * 10**6,
        "finish_date": inputs(s)["start_date"] + days_wall,
        "layout_text": layout_text(s),
    }


def layout_text(s: Scenario) -> str:
    """The layout as a reader writes it: TP 8 × PP 16 × CP 1 × DP 128 (EP when above 1)."""
    run = s.run
    text = f"TP {run.tp} × PP {run.pp} × CP {run.cp} × DP {run.dp}"
    return text + (f" (EP {run.ep})" if run.ep > 1 else "")
