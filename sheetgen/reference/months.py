"""The Months sheet: the plan's GPU-hours and cost by calendar month, fiscal
quarter and fiscal year.

The plan starts on the start date and runs its wall-clock days on all its GPUs,
phases one after another; every phase keeps all GPUs, so GPU-hours accrue at
GPUs x 24 per day whatever the phase.  Month n (the start date's month is 1)
gets GPUs x 24 x the days of the plan that fall in it and before the horizon
(``month_horizon`` months from the start month); its cost is the total cost
(GPU, energy and contingency) x the share of the wall-clock days elapsed by the
month's end, less that of the month before, so the months reach the total
exactly.  What falls after the horizon is one
remainder, so the months plus the remainder add up to the total cost.

Serving (issue 23, Serving sheet): from ``serve_start_date`` each month carries the
serving cost per month x the share of its days from that date (before the
horizon), 0 before it and 0 when the SLOs cannot be met; each month's total is
training + serving, and the table's totals add up the same way; fiscal quarters
and years carry their serving spend beside the training spend.

Fiscal quarter 1 and fiscal year 1 are the ones holding the start date, with
the fiscal year starting in ``fiscal_year_start_month``; each adds the months
whose first day falls in it.  Dates are spreadsheet serial numbers; each month's
label (``month_label_<n>``) is its first day's year and month as text, YYYY-MM.
"""

from __future__ import annotations

import datetime as dt

from sheetgen.reference.budget import budget
from sheetgen.reference.inputs import KeyValues
from sheetgen.reference.serving import serving
from sheetgen.scenarios.dates import excel_serial
from sheetgen.scenarios.run_fields import FISCAL_YEAR_SLOTS, MONTH_SLOTS, QUARTER_SLOTS
from sheetgen.scenarios.scenario import Scenario
from sheetgen.units import HOURS_PER_DAY

MONTHS_PER_QUARTER = 3
MONTHS_PER_YEAR = 12


def add_months(day: dt.date, months: int) -> dt.date:
    """The first of the month ``months`` after ``day``'s month."""
    index = day.year * MONTHS_PER_YEAR + day.month - 1 + months
    return dt.date(index // MONTHS_PER_YEAR, index % MONTHS_PER_YEAR + 1, 1)


def months(s: Scenario) -> KeyValues:
    run = s.run
    b = budget(s)
    start = excel_serial(run.start_date)
    finish = start + b["plan_days_wall"]
    first = add_months(run.start_date, 0)
    horizon_end = excel_serial(add_months(first, run.month_horizon))
    out: KeyValues = {"month_horizon_end": horizon_end}
    total = b["cost_total_usd"]
    month_firsts = [add_months(first, n) for n in range(MONTH_SLOTS)]
    costs = []
    before = 0.0
    for n, month in enumerate(month_firsts, start=1):
        month_end = excel_serial(add_months(month, 1))
        lo = max(start, excel_serial(month))
        hi = min(finish, month_end, horizon_end)
        days = max(0.0, hi - lo)
        # Spend by the month's end: the total x the share of the plan elapsed, which
        # reaches the total exactly once the plan is over.
        elapsed = max(0.0, min(month_end, horizon_end) - start)
        cum = total * min(1.0, elapsed / b["plan_days_wall"])
        cost = cum - before
        before = cum
        costs.append(cost)
        out[f"month_start_{n}"] = excel_serial(month)
        out[f"month_label_{n}"] = f"{month.year}-{month.month:02d}"
        out[f"month_gpu_hours_{n}"] = run.n_gpus * HOURS_PER_DAY * days
        out[f"month_cost_usd_{n}"] = cost
        out[f"month_cost_cum_usd_{n}"] = cum
    out["month_cost_after_horizon_usd"] = total - before

    # Serving (issue 23): the monthly cost x the share of each month's days from the
    # serving start date (before the horizon); training + serving per month.
    sv = serving(s)
    cost_month = sv["serve_cost_month_usd"]
    serve_month = float(cost_month) if sv["serve_slo_ok"] == 1 else 0.0
    serve_start = excel_serial(run.serve_start_date)
    serve_total = month_total = 0.0
    serve_costs = []
    for n, month in enumerate(month_firsts, start=1):
        m_first, m_next = excel_serial(month), excel_serial(add_months(month, 1))
        days = max(0, min(m_next, horizon_end) - max(serve_start, m_first))
        serve_cost = serve_month * days / (m_next - m_first)
        out[f"serve_month_cost_usd_{n}"] = serve_cost
        serve_costs.append(serve_cost)
        out[f"month_total_usd_{n}"] = costs[n - 1] + serve_cost
        serve_total += serve_cost
        out[f"serve_month_cum_usd_{n}"] = serve_total
        month_total += costs[n - 1] + serve_cost
    out["serve_cost_in_table_usd"] = serve_total
    out["months_total_usd"] = month_total

    def total_between(begin: dt.date, end: dt.date, values: list[float] = costs) -> float:
        return sum(c for m, c in zip(month_firsts, values, strict=True) if begin <= m < end)

    since_fy = (run.start_date.month - run.fiscal_year_start_month) % MONTHS_PER_YEAR
    for prefix, length, slots in (
        ("quarter", MONTHS_PER_QUARTER, QUARTER_SLOTS),
        ("fy", MONTHS_PER_YEAR, FISCAL_YEAR_SLOTS),
    ):
        begin = add_months(first, -(since_fy % length))
        for k in range(1, slots + 1):
            end = add_months(begin, length)
            out[f"{prefix}_start_{k}"] = excel_serial(begin)
            out[f"{prefix}_cost_usd_{k}"] = total_between(begin, end)
            out[f"{prefix}_serve_cost_usd_{k}"] = total_between(begin, end, serve_costs)
            begin = end
    return out
